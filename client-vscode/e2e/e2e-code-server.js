// Real VS Code, offline: code-server + headless chromium (playwright-core) run the extension's palette
// commands against the real `claude-memory lsp`. Started by run-code-server.sh, which installs the .vsix and
// writes the user settings; this script only drives the browser. Environment:
//   CODE_SERVER  the code-server bin; CS_DIR  holds "exts" and "ud" (extensions and user data dirs);
//   WORKSPACE    the folder opened; CHROMIUM (/usr/bin/chromium); PORT (18089); SCREENSHOT (./e2e.png)
// Checks, in order: the status bar item reports the store ("Memory: <n>"); "Claude Memory: Show Memory Stats"
// opens the stats document with the server's event count; "Claude Memory: Search Memory" for "hello" lists
// mem: citations in the QuickPick, and picking the first opens its details; the Sessions view lists sessions and
// expands one into its events; with ANNOTATED_FILE (a workspace file Claude wrote) open and the cursor on
// ANNOTATED_LINE, the current-line annotation ("Claude · <date> · “<prompt>” (mem:…)") shows after that line and the
// gutter marks Claude's lines (screenshot: SCREENSHOT_ANNOTATION), and "Why Is This Code Like This?" opens that
// line's story with linked citations. Exit 0 when all hold.
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
const SCREENSHOT_ANNOTATION = path.resolve(process.env.SCREENSHOT_ANNOTATION || "e2e-annotation.png");
const ANNOTATED_FILE = process.env.ANNOTATED_FILE || ""; // relative to WORKSPACE; empty: no annotation check
const ANNOTATED_LINE = Number(process.env.ANNOTATED_LINE || "1");
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
  let rows = [];
  // the row named exactly `title` (a longer title may rank first: "Markdown: Open Locked Preview to the Side")
  const at = await waitFor(`"${title}" in the palette`, async () => {
    rows = await page.$$eval(".quick-input-list .monaco-list-row", els => els.map(e => e.innerText));
    const i = rows.findIndex(r => r.split("\n")[0].trim() === title || r.split("\n")[0].trim().endsWith(`: ${title}`));
    return i >= 0 ? i + 1 : rows.length && rows[0].includes(title) ? 1 : undefined;
  }, 10000).catch(e => { throw new Error(`${e.message} (rows: ${JSON.stringify(rows.slice(0, 5))})`); });
  for (let i = 1; i < at; i++) await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
}

/** F1 opens the command palette; without its ">" the same box is Quick Open (files, ":<line>"). */
async function quickOpen(page, text) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget:not([style*='display: none']) input", { timeout: 10000 });
  await page.keyboard.press("Backspace");
  await page.keyboard.type(text, { delay: 10 });
}

/** The text shown after the cursor's line (`after.contentText` decorations are CSS generated content, not DOM
 * text), with the cursor's line number: {line, texts}. */
const afterCursorLine = page => page.evaluate(() => {
  const ed = document.querySelector(".editor-instance .monaco-editor");
  const active = ed && ed.querySelector(".margin-view-overlays .active-line-number");
  if (!active) return undefined;
  const top = active.getBoundingClientRect().top;
  const texts = Array.from(ed.querySelectorAll(".view-lines .view-line span"))
    .filter(e => Math.abs(e.getBoundingClientRect().top - top) < 4)
    .map(e => getComputedStyle(e, "::after").content)
    .filter(c => c && c !== "none" && c !== "normal" && c !== '""')
    .map(c => c.replace(/^"|"$/g, "").replace(/\\"/g, '"'));
  return { line: Number(active.innerText.trim()), texts };
});

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

    if (ANNOTATED_FILE) {
      // 5. a file Claude wrote: the current line's annotation, and the gutter marks
      const base = path.basename(ANNOTATED_FILE);
      await palette(page, "View: Close Primary Side Bar"); // room for the annotation in the screenshot
      await quickOpen(page, ANNOTATED_FILE);
      await waitFor(`${base} in Quick Open`, async () => {
        const rows = await page.$$eval(".quick-input-list .monaco-list-row", els => els.map(e => e.innerText));
        return rows.length && rows[0].includes(base);
      }, 20000);
      await page.keyboard.press("Enter");
      await waitFor(`${base} in the editor`, async () => {
        const tab = await page.$eval(".tabs-container .tab.active", e => e.innerText).catch(() => "");
        return tab.includes(base);
      }, 20000);
      await quickOpen(page, `:${ANNOTATED_LINE}`);
      await page.keyboard.press("Enter");
      const annotation = await waitFor(`the annotation after line ${ANNOTATED_LINE}`, async () => {
        const at = await afterCursorLine(page);
        if (!at || at.line !== ANNOTATED_LINE) return undefined;
        return at.texts.find(t => /^Claude( \(changed since\))? · \d{4}-\d\d-\d\d · .*\(mem:[0-9A-Za-z]{6}\)$/.test(t));
      }, 30000);
      checks.annotation = annotation;
      log("annotation:", JSON.stringify(annotation));
      checks.gutterMarks = await page.$$eval(".editor-instance .monaco-editor .view-overlays > div > div", els => els
        .filter(e => /ced-/.test(e.className) && getComputedStyle(e).borderLeftWidth !== "0px").length);
      log("lines with a gutter mark (of the visible ones):", checks.gutterMarks);
      await page.waitForTimeout(500);
      await page.screenshot({ path: SCREENSHOT_ANNOTATION });
      log("screenshot", SCREENSHOT_ANNOTATION);

      // 6. Why Is This Code Like This? for the cursor's line (details open as source in this run)
      await palette(page, "Claude Memory: Why Is This Code Like This?");
      const why = await waitFor("the why document", async () => {
        const t = await editorText(page);
        return t.startsWith(`### ${base}, line ${ANNOTATED_LINE}`) && t;
      }, 30000);
      if (!/\[mem:[0-9A-Za-z]{6}\]\(\.\.\/details\/[0-9A-Za-z]{6}\.md\)/.test(why)) throw new Error(`no linked citation in: ${why}`);
      checks.why = why.split("\n").slice(0, 3).join(" | ").slice(0, 300);
      log("why document:", JSON.stringify(checks.why));

      // 7. rendered: "Markdown: Open Preview" of that document is what claudeMemory.details.openAs "preview" (the
      // default) runs (markdown.showPreview); its citation links open their details in the preview
      await palette(page, "Markdown: Open Preview");
      const previewFrame = await waitFor("the why story in a markdown preview", async () => {
        for (const f of page.frames()) {
          const text = await f.$eval("body", b => b.innerText).catch(() => "");
          if (text.includes(`${base}, line ${ANNOTATED_LINE}`) && !text.includes("###")) return f;
        }
        return undefined;
      }, 30000);
      const link = await previewFrame.$("a[data-href^='../details/']");
      if (!link) throw new Error("no citation link in the preview");
      const target = await link.innerText();
      checks.previewLinks = await previewFrame.$$eval("a[data-href^='../details/']", as => as.length);
      await link.click();
      const opened = await waitFor(`the details of ${target} in the preview`, async () => {
        for (const f of page.frames()) {
          const heading = await f.$eval("h1", h => h.innerText).catch(() => "");
          if (heading === target) return heading;
        }
        return undefined;
      }, 30000);
      checks.previewLink = `${target} -> preview of # ${opened}`;
      log("preview:", checks.previewLinks, "citation links; clicked:", checks.previewLink);
      await page.screenshot({ path: SCREENSHOT_ANNOTATION.replace(/\.png$/, "-preview.png") });
    }
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
