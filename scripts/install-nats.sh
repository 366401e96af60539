#!/usr/bin/env bash
# Installs Debian's nats-server (2.9, run with -js) for the fleet tests (test/fleet/), which start a
# real server on an ephemeral port: a distribution package, never a downloaded binary.
# A CI step (.ci/run), not part of `npm test`: without it the fleet tests are skipped, saying why.
# Does nothing when nats-server is on PATH. Quiet; on failure, says why and exits non-zero.
set -euo pipefail

command -v "${NATS_SERVER:-nats-server}" >/dev/null && exit 0

fail() {
  echo "install-nats: $1" >&2
  [ -n "${LOG:-}" ] && [ -s "$LOG" ] && tail -n 20 "$LOG" >&2
  exit 1
}

command -v apt-get >/dev/null || fail "apt-get not found: install nats-server (2.9 or later) by your system's own means."
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || fail "installing nats-server needs root: run this script as root, or install sudo."
  SUDO=(sudo)
fi

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq >"$LOG" 2>&1 || fail "apt-get update failed (is the network or the Debian mirror reachable?):"
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends nats-server >"$LOG" 2>&1 ||
  fail "apt-get install nats-server failed:"
command -v nats-server >/dev/null || fail "nats-server was installed but is not on PATH."
echo "install-nats: installed $(nats-server --version 2>/dev/null || echo nats-server)"
