// Pure functions: QuickPick items, markdown documents, tree labels and status text, from real-shaped results
// (test/fixtures/*.json were produced by the memory service on the imported fixture transcripts).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  citationAt, eventItemData, fenced, forgetPrompt, formatTime, importSummary, normalizeCitation, renderDetails,
  renderFileHistory, renderStats, renderTimeline, searchPickItems, sessionItemData, statusText, timelineEvents,
} from "../src/render";
import { fileHistoryResult, sessionWindow, unwrapDetails } from "../src/api";
import type { DetailsItem, HistoryEvent, SearchResult, SessionInfo, StatusResult, TimelineResult } from "../src/types";
import searchJson from "./fixtures/search.json";
import showJson from "./fixtures/show.json";
import timelineJson from "./fixtures/timeline.json";
import sessionsJson from "./fixtures/sessions.json";
import statsJson from "./fixtures/stats.json";
import statusJson from "./fixtures/status.json";
import importJson from "./fixtures/import.json";
import historyJson from "./fixtures/fileHistory.json";
import sessionTimelineJson from "./fixtures/sessionTimeline.json";

const search = searchJson as unknown as SearchResult;
const show = (showJson as unknown as { details: DetailsItem[] }).details[0];
const timeline = timelineJson as unknown as TimelineResult;
const sessions = sessionsJson as unknown as SessionInfo[];
const status = statusJson as unknown as StatusResult;

test("citations are normalised and found under the cursor", () => {
  assert.equal(normalizeCitation("mem:sBS4Lt"), "mem:sBS4Lt");
  assert.equal(normalizeCitation(" [mem:sBS4Lt] "), "mem:sBS4Lt");
  assert.equal(normalizeCitation("sBS4Lt"), "mem:sBS4Lt");
  assert.equal(normalizeCitation("mem:short"), undefined);
  assert.equal(normalizeCitation(undefined), undefined);
  const line = "as decided in [mem:sBS4Lt] and mem:YxmCn0.";
  assert.equal(citationAt(line, 16), "mem:sBS4Lt");
  assert.equal(citationAt(line, 33), "mem:YxmCn0");
  assert.equal(citationAt(line, 3), undefined);
  assert.equal(citationAt("xmem:sBS4Lt", 5), undefined);
});

test("times are shown in UTC, minutes or seconds", () => {
  assert.equal(formatTime("2026-11-22T05:57:11.844000Z"), "2026-11-22 05:57");
  assert.equal(formatTime("2026-11-22T05:57:11.844000Z", true), "2026-11-22 05:57:11");
  assert.equal(formatTime("not a date"), "not a date");
  assert.equal(formatTime(null), "");
});

test("QuickPick items from a search result: citation + summary, type/time, snippet/detail", () => {
  const items = searchPickItems(search);
  assert.equal(items.length, 3);
  assert.deepEqual(items[0], {
    label: "mem:sBS4Lt  Bash: echo hello-from-mock",
    description: "tool_use · 2026-11-22 05:57 · high confidence",
    detail: "work · session dc75efdc · score 1.53",
    citation: "mem:sBS4Lt",
  });
  assert.equal(items[2].detail, "My Project_v2.0 · session 3b8a7f97 · score 1.53");
  // the full search shape (with text) puts a snippet in the detail
  const [withText] = searchPickItems({ results: [{ ...search.results[0], text: "Bash: echo hello-from-mock\nPrint a greeting" }] });
  assert.equal(withText.detail, "Bash: echo hello-from-mock Print a greeting — work · session dc75efdc · score 1.53");
  assert.deepEqual(searchPickItems({ results: [] }), []);
});

test("details document: header table, content fenced, source, neighbours", () => {
  const md = renderDetails(show);
  assert.match(md, /^# mem:sBS4Lt\n/);
  assert.ok(md.includes("| Type | tool_use (Bash) |"));
  assert.ok(md.includes("| When | 2026-11-22 05:57:11 UTC |"));
  assert.ok(md.includes("| Project | /home/dev/work |"));
  assert.ok(md.includes("| Session | `dc75efdc-6adf-4400-9099-a7992cc138fc` |"));
  assert.ok(md.includes("-home-dev-work/dc75efdc-6adf-4400-9099-a7992cc138fc.jsonl`, lines 26–27 |"));
  assert.ok(md.includes("## Content\n\n```text\nBash: echo hello-from-mock\nPrint a greeting\nhello-from-mock\n```"));
  assert.ok(md.includes("## In its session"));
  assert.ok(md.includes("- **▶** `mem:sBS4Lt` tool_use · 2026-11-22 05:57:11 — Bash: echo hello-from-mock"));
  assert.ok(md.includes("- `mem:eBbWIQ` user_prompt · 2026-11-22 05:57:11 — Please RUN_TOOL now"));
  // `content` (the LSP's name) wins over `text`; backticks inside content get a longer fence
  const md2 = renderDetails({ citation: "mem:AAAAAA", content: "use ```js fences```" });
  assert.ok(md2.includes("````text\nuse ```js fences```\n````"));
  assert.equal(fenced("a `b`"), "```text\na `b`\n```");
});

test("show results are accepted bare or wrapped in {details: [...]}", () => {
  assert.equal(unwrapDetails(showJson)?.citation, "mem:sBS4Lt");
  assert.equal(unwrapDetails(show)?.citation, "mem:sBS4Lt");
  assert.equal(unwrapDetails({ details: [], missing: ["mem:AAAAAA"] }), undefined);
  assert.equal(unwrapDetails(null), undefined);
});

test("timeline document and events", () => {
  const md = renderTimeline(timeline, "mem:sBS4Lt");
  assert.ok(md.startsWith("# Timeline: mem:sBS4Lt\n\n## Session `dc75efdc-6adf-4400-9099-a7992cc138fc` · /home/dev/work\n"));
  assert.equal(md.split("\n").filter(l => l.startsWith("- ")).length, 4);
  assert.deepEqual(timelineEvents(timeline).map(e => e.citation), ["mem:eBbWIQ", "mem:B0r4kJ", "mem:sBS4Lt", "mem:iSc89A"]);
  const twice = { windows: [timeline.windows[0], timeline.windows[0]] };
  assert.equal(timelineEvents(twice).length, 4);
  assert.match(renderTimeline({ windows: [], missing: ["mem:AAAAAA"] }, "x"), /Nothing found[\s\S]*Not found: `mem:AAAAAA`/);
});

test("a session's events (newest first from the server) become one window in session order", () => {
  const t = sessionWindow(sessionTimelineJson as unknown as HistoryEvent[], "dc75efdc-6adf-4400-9099-a7992cc138fc");
  assert.equal(t.windows.length, 1);
  assert.equal(t.windows[0].project, "/home/dev/work");
  assert.deepEqual(t.windows[0].events.map(e => [e.position, e.citation]), [[1, "mem:eBbWIQ"], [2, "mem:B0r4kJ"], [3, "mem:sBS4Lt"], [4, "mem:iSc89A"]]);
  assert.equal(t.windows[0].events[2].preview, "Bash: echo hello-from-mock Print a greeting hello-from-mock");
  assert.deepEqual(sessionWindow([]).windows[0].events, []);
});

test("tree item data for sessions and events", () => {
  assert.deepEqual(sessionItemData(sessions[0]), {
    label: "work · 2026-11-22 05:57",
    description: "4 events, 1 prompts",
    tooltip: "Session dc75efdc-6adf-4400-9099-a7992cc138fc\nProject: /home/dev/work\nBranch: feature/mock\nFrom 2026-11-22 05:57:11 to 2026-11-22 05:57:12 UTC",
  });
  assert.equal(sessionItemData({ ...sessions[0], title: "Fix the flaky test" }).label, "Fix the flaky test");
  assert.deepEqual(eventItemData(timeline.windows[0].events[0]), {
    label: "Please RUN_TOOL now",
    description: "user_prompt · 2026-11-22 05:57:11 · mem:eBbWIQ",
    tooltip: "mem:eBbWIQ · user_prompt\nPlease RUN_TOOL now",
  });
});

test("status text: running with embeddings unavailable, pending, not running", () => {
  const v = statusText(status);
  assert.equal(v.text, "$(database) Memory: 661 $(warning) keyword only");
  assert.equal(v.ok, true);
  assert.match(v.tooltip, /^Claude Memory service running \(pid 12891\), version 0\.1\.0\nData: \/tmp\/vsx-data\nEvents: 661\nEmbeddings: unavailable — No embedding model[^\n]*\nScope: every project$/);
  const scoped = { ...status, language_server: { workspace: [{ folder: "/w", project: "/w" }], settings: { allProjects: false } } };
  assert.match(statusText(scoped).tooltip, /\nScope: \/w$/);
  const pending = statusText({ ...status, embedding: { available: true, pending: 120, vectors: 541 } });
  assert.equal(pending.text, "$(database) Memory: 661 $(sync~spin) 120 to embed");
  assert.match(pending.tooltip, /Embeddings: 541 vectors, 120 pending/);
  assert.equal(statusText({ ...status, embedding: { available: true, pending: 0, vectors: 661 } }).text, "$(database) Memory: 661");
  const fetching = statusText({
    ...status, embedding: { available: false, reason: "not downloaded yet", download: { state: "downloading", bytes: 45e6, total: 90e6 } },
  });
  assert.equal(fetching.text, "$(database) Memory: 661 $(cloud-download) model 50%");
  assert.match(fetching.tooltip, /\nDownloading the embedding model: 50%; keyword search meanwhile/);
  const failed = statusText({
    ...status, embedding: { available: false, reason: "r", download: { state: "failed", error: "The hub could not be reached." } },
  });
  assert.equal(failed.text, "$(database) Memory: 661 $(warning) keyword only");
  assert.match(failed.tooltip, /\nModel download failed: The hub could not be reached\./);
  const off = statusText(undefined, "connection refused");
  assert.deepEqual(off, { text: "$(error) Memory: off", tooltip: "Claude Memory service not available: connection refused", ok: false });
  assert.equal(statusText({ running: false }).ok, false);
  assert.equal(statusText({ running: false }).tooltip, "Claude Memory service not running");
  const damaged = "The memory store /d/memory.duckdb is damaged and cannot be read; run 'claude-memory repair'.";
  assert.deepEqual(statusText({ running: false, error: damaged }), {
    text: "$(error) Memory: off", tooltip: `Claude Memory service not running: ${damaged}`, ok: false,
  });
});

test("stats document, import summary, forget prompt, file history", () => {
  const md = renderStats(statsJson as Record<string, unknown>, status);
  assert.ok(md.includes("**661 events** in 12 sessions across 5 projects."));
  assert.ok(md.includes("| events_by_type.tool_use | 368 |"));
  assert.ok(md.includes("## Service"));
  assert.equal(importSummary(importJson as Record<string, unknown>), "Imported 0 new events; 0 of 14 transcripts had new lines.");
  assert.equal(importSummary({ files: { read: 2, found: 3 }, events: { new: 1 } }), "Imported 1 new event; 2 of 3 transcripts had new lines.");
  assert.equal(importSummary({}), "Claude Code history imported.");
  assert.equal(forgetPrompt("mem:sBS4Lt", show),
    'Forget mem:sBS4Lt (tool_use, 2026-11-22 05:57): "Bash: echo hello-from-mock Print a greeting hello-from-mock"? It is removed from the store and the search index for good.');
  const fh = renderFileHistory(fileHistoryResult(historyJson), "/ignored");
  assert.ok(fh.startsWith("# History of `/home/USER/projects/spotter-worktrees/spotter-dov/assets/js/app.js`\n\n15 events touched this file; the newest 3:\n"));
  assert.ok(fh.includes("- `mem:h8oXHO` tool_use · 2026-02-12 21:00:30 — Bash: git add .beads/issues.jsonl assets/js/app.js"));
  assert.match(renderFileHistory(fileHistoryResult({ events: [] }), "/w/a.py"), /^# History of `\/w\/a.py`\n\n_No past session touched this file._/);
  assert.equal(fileHistoryResult([{ citation: "mem:AAAAAA" }]).events.length, 1);
});
