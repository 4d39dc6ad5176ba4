#!/usr/bin/env bash
# End to end in real VS Code, offline: code-server 4.100.3 (Code 1.100.3) + headless Debian chromium driven by
# playwright-core (docs: ../shared/docs/TOOLING.md §7). Builds the .vsix, installs it into code-server, imports
# the fixture transcripts into a fresh memory store, opens a workspace, then runs "Show Memory Stats" and
# "Search Memory" from the command palette against the real language server (`claude-memory lsp`).
#
# Everything it installs goes under $E2E_DIR (default client-vscode/.e2e, gitignored); Debian packages are
# installed with apt-get when missing (needs root). Environment:
#   CLAUDE_MEMORY_BIN  the claude-memory command   (default: <repo>/.venv/bin/claude-memory)
#   FIXTURES           a Claude home to import      (default: ../shared/fixtures/claude_home)
#   E2E_DIR, PORT (18089), CHROMIUM (/usr/bin/chromium)
# Exit code 0: both palette commands showed the server's answer.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
EXT="$(dirname "$HERE")"
REPO="$(dirname "$EXT")"
E2E_DIR="$(mkdir -p "${E2E_DIR:-$EXT/.e2e}" && cd "${E2E_DIR:-$EXT/.e2e}" && pwd)"
CLAUDE_MEMORY_BIN="${CLAUDE_MEMORY_BIN:-$REPO/.venv/bin/claude-memory}"
FIXTURES="${FIXTURES:-$REPO/../shared/fixtures/claude_home}"
CS_VERSION=4.100.3
t0=$(date +%s)
say() { echo "[e2e +$(( $(date +%s) - t0 ))s] $*"; }

need=()
for p in libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev pkg-config ripgrep chromium; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
  say "apt-get install ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

CS="$E2E_DIR/cs/node_modules/.bin/code-server"
if [[ ! -x "$CS" ]]; then
  # @vscode/ripgrep's postinstall downloads rg from GitHub: pre-seed its cache with Debian's rg
  RG_CACHE="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$RG_CACHE"
  [[ -f "$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" ]] ||
    tar czf "$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C /usr/bin rg
  say "npm install code-server@$CS_VERSION (native modules compile; about a minute)"
  mkdir -p "$E2E_DIR/cs"
  # a package.json of its own, or npm would install into client-vscode (the nearest one up)
  echo '{"name": "e2e-code-server", "private": true}' >"$E2E_DIR/cs/package.json"
  (cd "$E2E_DIR/cs" && npm_config_yes=true npm_config_unsafe_perm=true \
    npm install --no-audit --no-fund --no-save "code-server@$CS_VERSION" >"$E2E_DIR/cs-install.log" 2>&1) ||
    { tail -30 "$E2E_DIR/cs-install.log"; exit 1; }
fi
if [[ ! -d "$E2E_DIR/pw/node_modules/playwright-core" ]]; then
  say "npm install playwright-core (uses the system chromium, downloads no browser)"
  mkdir -p "$E2E_DIR/pw" && echo '{"name": "e2e-playwright", "private": true}' >"$E2E_DIR/pw/package.json"
  (cd "$E2E_DIR/pw" && npm install --no-audit --no-fund --no-save playwright-core@1 >/dev/null 2>&1)
fi

say "build and package the extension"
(cd "$EXT" && npm run package >/dev/null 2>&1)
VSIX="$EXT/claude-memory.vsix"

say "fresh memory store from the fixtures"
rm -rf "$E2E_DIR/data" "$E2E_DIR/claude_home" "$E2E_DIR/ud" "$E2E_DIR/exts" "$E2E_DIR/wsp"
cp -r "$FIXTURES" "$E2E_DIR/claude_home"
export CLAUDE_MEMORY_HOME="$E2E_DIR/data" CLAUDE_CONFIG_DIR="$E2E_DIR/claude_home"  # never ~/.claude
"$CLAUDE_MEMORY_BIN" import --claude-home "$CLAUDE_CONFIG_DIR" --no-wait >"$E2E_DIR/import.log" 2>&1 ||
  { cat "$E2E_DIR/import.log"; exit 1; }
sed -n 1,2p "$E2E_DIR/import.log"
stop_service() { "$CLAUDE_MEMORY_BIN" stop >/dev/null 2>&1 || true; }
trap stop_service EXIT

say "install the .vsix into code-server"
"$CS" --install-extension "$VSIX" --extensions-dir "$E2E_DIR/exts" --user-data-dir "$E2E_DIR/ud" >"$E2E_DIR/install.log" 2>&1 ||
  { cat "$E2E_DIR/install.log"; exit 1; }
grep -v '^$' "$E2E_DIR/install.log" | tail -1
mkdir -p "$E2E_DIR/ud/User" "$E2E_DIR/wsp"
printf '# Notes\n\nThe greeting came from [mem:XXXXXX].\n' >"$E2E_DIR/wsp/notes.md"
cat >"$E2E_DIR/ud/User/settings.json" <<JSON
{
  "claudeMemory.server.command": "$CLAUDE_MEMORY_BIN",
  "claudeMemory.dataDir": "$CLAUDE_MEMORY_HOME",
  "claudeMemory.allProjects": true,
  "claudeMemory.details.openAs": "source",
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "extensions.autoCheckUpdates": false,
  "telemetry.telemetryLevel": "off"
}
JSON

say "run code-server + chromium"
NODE_PATH="$E2E_DIR/pw/node_modules" CODE_SERVER="$CS" CS_DIR="$E2E_DIR" WORKSPACE="$E2E_DIR/wsp" \
  SCREENSHOT="$E2E_DIR/e2e.png" node "$HERE/e2e-code-server.js" && rc=0 || rc=$?
say "done (rc $rc)"
exit $rc
