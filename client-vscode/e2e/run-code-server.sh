#!/usr/bin/env bash
# End to end in real VS Code, offline: code-server 4.100.3 (Code 1.100.3) + headless Debian chromium driven by
# playwright-core (docs: ../shared/docs/TOOLING.md §7). Builds the .vsix, installs it into code-server, imports
# the fixture transcripts into a fresh memory store, opens a workspace, then runs "Show Memory Stats" and
# "Search Memory" from the command palette against the real language server (`claude-memory lsp`), and shows the
# current-line annotation on a line Claude wrote (screenshot: $E2E_DIR/e2e-annotation.png).
#
# Line provenance needs edit records for a file of the workspace, at the very path the transcripts name: the
# project's own fixture session that writes /home/dev/shop/src/shop/cart.py (a Write, then an Edit adding
# apply_discount; tests/fixtures/claude_home) is copied into the imported Claude home with "/home/dev/shop"
# rewritten to the workspace folder, and src/shop/cart.py is created there by replaying that session's Write and
# Edit, so the file is exactly what Claude left.
#
# Everything it installs goes under $E2E_DIR (default client-vscode/.e2e, gitignored); Debian packages are
# installed with apt-get when missing (needs root). Environment:
#   CLAUDE_MEMORY_BIN  the claude-memory command   (default: <repo>/.venv/bin/claude-memory)
#   FIXTURES           a Claude home to import      (default: ../shared/fixtures/claude_home)
#   SHOP_SESSION       the transcript that writes cart.py
#                      (default: tests/fixtures/claude_home/projects/-home-dev-shop/0a1e5c1d-0006-4000-8000-00000000c001.jsonl)
#   E2E_DIR, PORT (18089), CHROMIUM (/usr/bin/chromium)
# Exit code 0: both palette commands showed the server's answer, and the annotation showed on Claude's line.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
EXT="$(dirname "$HERE")"
REPO="$(dirname "$EXT")"
E2E_DIR="$(mkdir -p "${E2E_DIR:-$EXT/.e2e}" && cd "${E2E_DIR:-$EXT/.e2e}" && pwd)"
CLAUDE_MEMORY_BIN="${CLAUDE_MEMORY_BIN:-$REPO/.venv/bin/claude-memory}"
FIXTURES="${FIXTURES:-$REPO/../shared/fixtures/claude_home}"
SHOP_SESSION="${SHOP_SESSION:-$REPO/tests/fixtures/claude_home/projects/-home-dev-shop/0a1e5c1d-0006-4000-8000-00000000c001.jsonl}"
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
# the cart session, moved from /home/dev/shop to the workspace; cart.py as its Write and Edit left it
WSP="$E2E_DIR/wsp"
mkdir -p "$WSP"
SHOP_DIR="$E2E_DIR/claude_home/projects/$(printf '%s' "$WSP" | sed 's#[^A-Za-z0-9]#-#g')"
mkdir -p "$SHOP_DIR"
node - "$SHOP_SESSION" "$SHOP_DIR/$(basename "$SHOP_SESSION")" "/home/dev/shop" "$WSP" "src/shop/cart.py" <<'NODE'
const fs = require("fs");
const path = require("path");
const [src, dest, from, to, rel] = process.argv.slice(2);
// rewrite the project path inside every JSON value (JSON.stringify escapes the new path properly)
const swap = v => typeof v === "string" ? v.split(from).join(to)
  : Array.isArray(v) ? v.map(swap) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x)])) : v;
const lines = fs.readFileSync(src, "utf8").split("\n").filter(Boolean).map(l => swap(JSON.parse(l)));
fs.writeFileSync(dest, lines.map(o => JSON.stringify(o)).join("\n") + "\n");
// replay the session's Write / Edit of the file
const file = path.join(to, rel);
let text;
for (const o of lines) {
  const blocks = Array.isArray(o.message?.content) ? o.message.content : [];
  for (const b of blocks) {
    if (b.type !== "tool_use" || b.input?.file_path !== file) continue;
    if (b.name === "Write") text = b.input.content;
    else if (b.name === "Edit" && text !== undefined && text.includes(b.input.old_string)) {
      text = b.input.replace_all ? text.split(b.input.old_string).join(b.input.new_string) : text.replace(b.input.old_string, () => b.input.new_string);
    }
  }
}
if (text === undefined) { console.error(`no Write of ${file} in ${src}`); process.exit(1); }
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, text);
console.log(`${rel}: ${text.split("\n").length - 1} lines as the session left it`);
NODE
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
mkdir -p "$E2E_DIR/ud/User" "$WSP"
printf '# Notes\n\nThe greeting came from [mem:XXXXXX].\n' >"$E2E_DIR/wsp/notes.md"
cat >"$E2E_DIR/ud/User/settings.json" <<JSON
{
  "claudeMemory.server.command": "$CLAUDE_MEMORY_BIN",
  "claudeMemory.dataDir": "$CLAUDE_MEMORY_HOME",
  "claudeMemory.allProjects": true,
  "claudeMemory.details.openAs": "source",
  "claudeMemory.annotations.currentLine": true,
  "claudeMemory.annotations.gutter": true,
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "git.openRepositoryInParentFolders": "never",
  "extensions.autoCheckUpdates": false,
  "telemetry.telemetryLevel": "off"
}
JSON

say "run code-server + chromium"
NODE_PATH="$E2E_DIR/pw/node_modules" CODE_SERVER="$CS" CS_DIR="$E2E_DIR" WORKSPACE="$E2E_DIR/wsp" \
  SCREENSHOT="$E2E_DIR/e2e.png" SCREENSHOT_ANNOTATION="$E2E_DIR/e2e-annotation.png" \
  ANNOTATED_FILE="src/shop/cart.py" ANNOTATED_LINE=12 node "$HERE/e2e-code-server.js" && rc=0 || rc=$?
say "done (rc $rc)"
exit $rc
