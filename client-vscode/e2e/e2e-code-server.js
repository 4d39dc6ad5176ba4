// Real VS Code, offline: code-server + headless chromium (playwright-core) run the extension's palette
// commands against the real `claude-memory lsp`. Started by run-code-server.sh, which installs the .vsix and
// writes the user settings; this script only drives the browser. Environment:
//   CODE_SERVER  the code-server bin; CS_DIR  holds "exts" and "ud" (extensions and user data dirs);
//   WORKSPACE    the folder opened; CHROMIUM (/usr/bin/chromium); PORT (18089); SCREENSHOT (./e2e.png)
// Checks, in order: the status bar item reports the store ("Memory: <n>"); "Claude Memory: Show Memory Stats"
// opens the stats document with the server's event count; "Claude Memory: Search Memory" for "hello" lists
// mem: citations in the QuickPick, and picking the first opens its details; the Sessions view lists sessions and
// expands one into its events. Exit 0 when all hold.
const { chromium } = require("playwright-core");
const { spawn } = require("child_process");
const path = require("path");

const sleep = ms => new Promise(r => setTimeout(r, ms));
const CODE_SERVER = process.env.CODE_SERVER;
const CS_DIR = path.resolve(process.env.CS_DIR || ".e2e");
const WORKSPACE = path.resolve(process.env.WORKSPACE || ".e2e/wsp");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const PORT = process.env.PORT || "18089";
const SCREENSHOT = path.resolve(process.env.SCREENSHOT || "e2e.png");
const t0 = Date.now();
const log = (...a) => console.log(`[+${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

async function waitFor(what, fn, timeoutMs) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    last = await fn().catch(() => undefined);
    if (last) return last;
    await sleep(300);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function palette(page, title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget:not([style*='display: none']) input", { timeout: 10000 });
  await page.keyboard.type(title, { delay: 10 });
  await waitFor(`"${title}" in the palette`, async () => {
    const rows = await page.$$eval(".quick-input-list .monaco-list-row", els => els.map(e => e.innerText));
    return rows.length && rows[0].includes(title);
  }, 10000);
  await page.keyboard.press("Enter");
}

const editorText = page => page.$eval(".editor-instance .monaco-editor .view-lines", e => e.innerText.replace(/\u00a0/g, " "));

(async () => {
  const checks = {};
  const cs = spawn(CODE_SERVER, ["--auth", "none", "--bind-addr", `127.0.0.1:${PORT}`, "--disable-telemetry", "--disable-update-check",
    "--extensions-dir", path.join(CS_DIR, "exts"), "--user-data-dir", path.join(CS_DIR, "ud"), WORKSPACE],
    { stdio: ["ignore", "pipe", "pipe"], env: process.env });
  const csLog = [];
  cs.stdout.on("data", d => csLog.push(String(d)));
  cs.stderr.on("data", d => csLog.push(String(d)));
  let browser;
  try {
    await waitFor("code-server /healthz", async () => (await fetch(`http://127.0.0.1:${PORT}/healthz`)).ok, 30000);
    log("code-server up");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu",
      "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"] });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`http://127.0.0.1:${PORT}/?folder=${encodeURIComponent(WORKSPACE)}`);
    await page.waitForSelector(".monaco-workbench", { timeout: 60000 });
    log("workbench loaded");

    // 1. the status bar item: extension active, language server started, memory service answering
    const status = await waitFor("the Claude Memory status bar item", async () => {
      const t = await page.$$eval(".statusbar-item", els => els.map(e => e.innerText).find(t => /Memory: \d+/.test(t)));
      return t;
    }, 60000);
    checks.status = status.trim();
    log("status bar:", JSON.stringify(checks.status));

    // 2. Show Memory Stats
    await palette(page, "Claude Memory: Show Memory Stats");
    const stats = await waitFor("the stats document", async () => {
      const t = await editorText(page);
      return /\d+ events\*\* in \d+ sessions/.test(t) && t;
    }, 30000);
    checks.stats = stats.split("\n").slice(0, 3).join(" | ");
    log("stats document:", JSON.stringify(checks.stats));

    // 3. Search Memory -> QuickPick -> details
    await palette(page, "Claude Memory: Search Memory");
    await waitFor("the search input box", async () => {
      const title = await page.$eval(".quick-input-widget .quick-input-title", e => e.innerText);
      return title.includes("Search Memory");
    }, 10000);
    await page.keyboard.type("hello");
    await page.keyboard.press("Enter");
    const items = await waitFor("search results in the QuickPick", async () => {
      const rows = await page.$$eval(".quick-input-list .monaco-list-row", els => els.map(e => e.innerText.replace(/\n+/g, " ")));
      return rows.length && rows[0].includes("mem:") && rows;
    }, 30000);
    const title = await page.$eval(".quick-input-widget .quick-input-title", e => e.innerText).catch(() => "");
    checks.quickPickTitle = title;
    checks.firstResult = items[0];
    log("QuickPick:", JSON.stringify(title), items.length, "rows; first:", JSON.stringify(items[0]));
    const citation = /mem:[0-9A-Za-z]{6}/.exec(items[0])[0];
    await page.keyboard.press("Enter");
    const details = await waitFor(`the details of ${citation}`, async () => {
      const t = await editorText(page);
      return t.startsWith(`# ${citation}`) && t;
    }, 30000);
    checks.details = details.split("\n").slice(0, 6).join(" | ");
    log("details document:", JSON.stringify(checks.details));

    // 4. the Sessions view: sessions, and a session's events
    await page.click(".activitybar [aria-label^='Claude Memory']");
    const viewRows = sel => page.$$eval(sel, els => els.map(e => e.innerText.replace(/\n+/g, " ")));
    const sessions = await waitFor("sessions in the Claude Memory view", async () => {
      const rows = await viewRows(".sidebar .monaco-list-row");
      return rows.length && rows.some(r => / events, \d+ prompts/.test(r)) && rows;
    }, 30000);
    checks.sessions = `${sessions.length} rows; first: ${sessions[0]}`;
    log("sessions view:", JSON.stringify(checks.sessions));
    await page.click(".sidebar .monaco-list-row >> nth=0");
    const expanded = await waitFor("the first session's events", async () => {
      const rows = await viewRows(".sidebar .monaco-list-row");
      return rows.length > sessions.length && rows;
    }, 30000);
    checks.sessionEvents = expanded.slice(1, 1 + expanded.length - sessions.length).map(r => r.slice(0, 90));
    log("session events:", JSON.stringify(checks.sessionEvents));
    await page.screenshot({ path: SCREENSHOT });
    log("screenshot", SCREENSHOT);
    process.exitCode = 0;
  } catch (e) {
    console.error("FAILED:", e && e.message ? e.message : e);
    console.error("code-server log (tail):\n" + csLog.join("").split("\n").slice(-30).join("\n"));
    if (browser) {
      const pages = browser.contexts().flatMap(c => c.pages());
      if (pages[0]) await pages[0].screenshot({ path: SCREENSHOT }).catch(() => {});
    }
    process.exitCode = 1;
  } finally {
    console.log("checks:", JSON.stringify(checks, null, 1));
    if (browser) await browser.close().catch(() => {});
    cs.kill("SIGTERM");
    await new Promise(r => { cs.on("exit", r); setTimeout(r, 5000); });
    log("total");
  }
})();
