#!/usr/bin/env bash
# Usage: scripts/measure-watches.sh [STRAY_FILES=100000] [CLI=dist/src/cli.js]
# What the daemon pays for files in .pulse/ that are not pulse's (docs/reliability.md): starts
# `pulse start` on a temp project whose .pulse/ holds STRAY_FILES empty files, then prints its
# inotify watches (the `inotify wd:` lines of /proc/<pid>/fdinfo), RSS and CPU once it is
# watching, how long an edit of guidance.md takes to reach events.jsonl, and the same figures
# 10 s after the stray files are deleted. Linux only (/proc); needs node, curl and bc.
set -euo pipefail
N=${1:-100000}
CLI=${2:-dist/src/cli.js}
P=$(mktemp -d "${TMPDIR:-/tmp}/pulse-watches-XXXXXX")
OUT=$P.out
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$P" "$OUT"; }
trap cleanup EXIT
mkdir -p "$P/.pulse"
node -e 'const fs = require("fs"); for (let i = 0; i < +process.argv[2]; i++) fs.writeFileSync(`${process.argv[1]}/stray-${i}.txt`, "")' "$P/.pulse" "$N"

started=$(date +%s%3N)
node "$CLI" start --project "$P" --port 0 >"$OUT" 2>&1 &
PID=$!
until grep -qs 'MCP endpoint' "$OUT"; do sleep 0.1; done
BASE=$(grep -o 'http://[^ ]*/mcp' "$OUT" | head -1)
BASE=${BASE%/mcp}
until curl -s "$BASE/status" | grep -q '"watcher":{"state":"watching"'; do sleep 0.1; done

watches() {
  local fd total=0
  for fd in /proc/"$PID"/fd/*; do
    if [ "$(readlink "$fd")" = anon_inode:inotify ]; then
      total=$((total + $(grep -c '^inotify wd' /proc/"$PID"/fdinfo/"${fd##*/}" || true)))
    fi
  done
  echo "$total"
}
rss_mb() { awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' /proc/"$PID"/status; }
cpu_s() { awk '{ print ($14 + $15) / 100 }' /proc/"$PID"/stat; }
now_ms() { date +%s%3N; }

echo "stray files: $N"
echo "watching:    $(($(now_ms) - started)) ms after start, $(watches) inotify watches, RSS $(rss_mb) MB, CPU $(cpu_s) s"
t0=$(now_ms)
echo 'measured edit' >"$P/.pulse/guidance.md"
until grep -q '"path":".pulse/guidance.md"' "$P/.pulse/events.jsonl" 2>/dev/null; do sleep 0.01; done
echo "edit logged: $(($(now_ms) - t0)) ms after guidance.md was written (no tool call)"
c0=$(cpu_s)
find "$P/.pulse" -name 'stray-*' -delete
sleep 10
echo "10 s after deleting the strays: $(watches) inotify watches, RSS $(rss_mb) MB, CPU $(echo "$(cpu_s) - $c0" | bc) s from the start of the deletion"
