#!/usr/bin/env bash
# Installs Debian's chromium for the status page's browser test (test/e2e/status-page.test.ts),
# which drives it through playwright-core: a distribution package, never a downloaded browser build.
# A CI step (.ci/run), not part of `npm test`: without it the browser test is skipped, saying why.
# Does nothing when /usr/bin/chromium is there. Quiet; on failure, says why and exits non-zero.
set -euo pipefail

# CHROMIUM is overridable only to try the script's failure paths by hand.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] && exit 0

fail() {
  echo "install-browser: $1" >&2
  [ -n "${LOG:-}" ] && [ -s "$LOG" ] && tail -n 20 "$LOG" >&2
  exit 1
}

command -v apt-get >/dev/null || fail "apt-get not found: install Chromium so that $CHROMIUM exists, by your system's own means."
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || fail "installing chromium needs root: run this script as root, or install sudo."
  SUDO=(sudo)
fi

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq >"$LOG" 2>&1 || fail "apt-get update failed (is the network or the Debian mirror reachable?):"
# fonts-liberation: without recommends, pages would render with no font to draw text.
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-liberation >"$LOG" 2>&1 ||
  fail "apt-get install chromium failed:"
[ -x "$CHROMIUM" ] || fail "chromium was installed but $CHROMIUM is missing."
echo "install-browser: installed $("$CHROMIUM" --version 2>/dev/null || echo chromium)"
