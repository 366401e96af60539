#!/usr/bin/env bash
# Installs the real agent CLIs the agent suite drives (test/agents/cli: Claude Code, Codex, Gemini
# CLI, Copilot CLI, opencode) from their own lockfile, never as pulse's dependencies. Skips the
# install when the installed tree was made from this very lockfile.
set -euo pipefail
cd "$(dirname "$0")/../test/agents/cli"
stamp=node_modules/.installed-from-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then exit 0; fi
# The CLIs' engines fields ask for newer Node than ours; their native binaries do not care.
npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
echo "install-agent-clis: $(node_modules/.bin/claude --version), $(node_modules/.bin/codex --version), gemini $(node_modules/.bin/gemini --version), $(HOME="$PWD/node_modules/.copilot-home" COPILOT_PKG_CACHE_HOME="${TMPDIR:-/tmp}/pulse-copilot-pkg-cache" node_modules/.bin/copilot --version | head -1), opencode $(HOME="$PWD/node_modules/.opencode-home" node_modules/opencode-linux-x64/bin/opencode --version)"
