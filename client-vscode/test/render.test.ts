// Pure functions: QuickPick items, markdown documents, tree labels and status text, from real-shaped results
// (test/fixtures/*.json were produced by the memory service on the imported fixture transcripts).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  annotationHover, annotationText, blameAt, blockerItemData, citationAt, citationLink, claudeLines, code, eventItemData, fenced, forgetPrompt,
  formatTime, importSummary, keyValueTable, linkCitations, normalizeCitation, renderDetails, renderFileHistory, renderStats, renderTask,
  renderTimeline, renderWhy, searchPickItems, sessionItemData, statusText, taskDocName, taskGroups, taskItemData, taskStatusLabel, taskStepLine,
  timelineEvents, whyKnown, whyNothingMessage,
} from "../src/render";
import { blameResult, fileHistoryResult, sessionWindow, taskDetail, taskInfo, unwrapDetails } from "../src/api";
import type { DetailsItem, HistoryEvent, SearchResult, SessionInfo, StatusResult, TaskDetail, TaskInfo, TimelineResult, WhyResult } from "../src/types";
import searchJson from "./fixtures/search.json";
import showJson from "./fixtures/show.json";
import timelineJson from "./fixtures/timeline.json";
import sessionsJson from "./fixtures/sessions.json";
import statsJson from "./fixtures/stats.json";
import statusJson from "./fixtures/status.json";
import importJson from "./fixtures/import.json";
import historyJson from "./fixtures/fileHistory.json";
import sessionTimelineJson from "./fixtures/sessionTimeline.json";
import blameJson from "./fixtures/blame.json";
import whyJson from "./fixtures/why.json";
import tasksJson from "./fixtures/tasks.json";
import taskJson from "./fixtures/task.json";

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

test("details document: facts table, content fenced, source, neighbours linked", () => {
  const md = renderDetails(show);
  assert.match(md, /^# mem:sBS4Lt\n/);
  assert.ok(md.includes("| Type | tool_use (Bash) |"));
  assert.ok(md.includes("| When | 2026-11-22 05:57:11 UTC |"));
  assert.ok(md.includes("| Project | /home/dev/work |"));
  assert.ok(md.includes("| Session | `dc75efdc-6adf-4400-9099-a7992cc138fc` |"));
  assert.ok(md.includes("-home-dev-work/dc75efdc-6adf-4400-9099-a7992cc138fc.jsonl`, lines 26–27 |"));
  assert.ok(md.includes("## Content\n\n```text\nBash: echo hello-from-mock\nPrint a greeting\nhello-from-mock\n```"));
  assert.ok(md.includes("| Field | Value |\n|---|---|\n| Type |"), "a header that says what the columns are");
  assert.ok(md.includes("## In its session"));
  assert.ok(md.includes("- **▶** [mem:sBS4Lt](../details/sBS4Lt.md) tool_use · 2026-11-22 05:57:11 — Bash: echo hello-from-mock"));
  // preview text is shown as written (`RUN_TOOL`, `__init__` stay text, not emphasis)
  assert.ok(md.includes("- [mem:eBbWIQ](../details/eBbWIQ.md) user_prompt · 2026-11-22 05:57:11 — Please RUN\\_TOOL now"));
  // `content` (the LSP's name) wins over `text`; backticks inside content get a longer fence
  const used = renderDetails({ ...show, citation_uses: 4, sessions_used: 3, last_used: "2026-03-12T09:00:00Z", level: 2 });
  assert.ok(used.includes("| Used | 4 times in 3 sessions, last 2026-03-12 09:00:00 UTC |"), used);
  assert.ok(used.includes("| Level | L2 |"));
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
  const endless = statusText({ ...status, embedding: { available: true, pending: 0, vectors: 661 },
    endless: { mode: "endless", working_set: 47, continuity: 0.85, transition: "seamless", consolidated: 23 } });
  assert.equal(endless.text, "$(database) Memory: 661 ∞");
  assert.match(endless.tooltip, /\nEndless mode: working set 47 events, continuity 0\.85 \(seamless\), 23 consolidated/);
  assert.doesNotMatch(statusText({ ...status, endless: { mode: "session" } }).tooltip, /Endless/);
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
  assert.ok(fh.includes("- [mem:h8oXHO](../details/h8oXHO.md) tool_use · 2026-02-12 21:00:30 — Bash: git add .beads/issues.jsonl assets/js/app.js"));
  assert.match(renderFileHistory(fileHistoryResult({ events: [] }), "/w/a.py"), /^# History of `\/w\/a.py`\n\n_No past session touched this file._/);
  assert.equal(fileHistoryResult([{ citation: "mem:AAAAAA" }]).events.length, 1);
});

/** The pipes of a markdown table row that separate cells (an escaped `\|` is text). */
const cellBars = (row: string) => (row.match(/(?<!\\)\|/g) ?? []).length;

test("a details page always renders cleanly: no empty table, no empty header, no stray pipes or line breaks", () => {
  // a memory with nothing but its citation: no table at all (an empty one shows as a stray bar in the preview)
  const bare = renderDetails({ citation: "mem:AAAAAA" });
  assert.equal(bare, "# mem:AAAAAA\n\n## Content\n\n_No text._\n");
  assert.ok(!bare.includes("|"));
  assert.ok(!bare.includes("undefined"));
  // values with pipes, line breaks and backticks stay inside their cell
  const md = renderDetails({
    citation: "mem:BBBBBB", tool_name: "Bash", project: "/w/a|b", session_id: "s1", agent_id: "agent\nx",
    files: ["/w/x|y.py", "/w/we`ird.py"], source: { path: "/t/s|1.jsonl", line_start: 3, line_end: 4 }, content: "a | b\nc",
  });
  const rows = md.split("\n").filter(l => l.startsWith("|"));
  assert.equal(rows[0], "| Field | Value |");
  assert.equal(rows.length, 2 + 6); // header, rule, Type, Project, Session, Subagent, Files, Source
  for (const r of rows) assert.equal(cellBars(r), 3, r);
  assert.ok(md.includes("| Type | tool_use (Bash) |"));
  assert.ok(md.includes("| Project | /w/a\\|b |"));
  assert.ok(md.includes("| Subagent | agent x |"));
  assert.ok(md.includes("| Files | `/w/x\\|y.py`, `` /w/we`ird.py `` |"));
  assert.ok(!md.includes("| When |"), "empty values are left out");
  assert.ok(md.includes("```text\na | b\nc\n```"), "content is fenced, not put in a table");
  assert.deepEqual(keyValueTable([["a", ""], ["b", null]], ["K", "V"]), []);
  assert.equal(code("a`b"), "`` a`b ``");
  // an empty stats answer has no table either
  assert.ok(!renderStats({}).includes("|"));
});

test("citations in markdown become links to their details document; code is left alone", () => {
  assert.equal(citationLink("mem:AbC123"), "[mem:AbC123](../details/AbC123.md)");
  assert.equal(citationLink("mem:AbC123", "command"), "[mem:AbC123](command:claudeMemory.openCitation?%5B%22mem%3AAbC123%22%5D)");
  assert.equal(linkCitations("Edit [mem:j9ULpU] on 2026-03-11, see mem:FQtSGq."),
    "Edit [mem:j9ULpU](../details/j9ULpU.md) on 2026-03-11, see [mem:FQtSGq](../details/FQtSGq.md).");
  assert.equal(linkCitations("`mem:AAAAAA` and ``x mem:BBBBBB``"), "`mem:AAAAAA` and ``x mem:BBBBBB``");
  assert.equal(linkCitations("```\nmem:AAAAAA\n```\nmem:BBBBBB"), "```\nmem:AAAAAA\n```\n[mem:BBBBBB](../details/BBBBBB.md)");
  assert.equal(linkCitations("[mem:AAAAAA](../details/AAAAAA.md) xmem:BBBBBB mem:CCCCCCC"), "[mem:AAAAAA](../details/AAAAAA.md) xmem:BBBBBB mem:CCCCCCC");
});

const blame = blameResult(blameJson);

test("blame: Claude's lines, and the current-line annotation (fuzzy labelled as changed since)", () => {
  // 63-bit edit ids: ranges and edits parsed from the same answer round the same way, and these two stay apart
  assert.notEqual(blame.edits[0].id, blame.edits[1].id);
  assert.deepEqual(claudeLines(blame), [{ start: 1, end: 9, fuzzy: false }, { start: 10, end: 11, fuzzy: false }, { start: 12, end: 13, fuzzy: true }]);
  assert.equal(blameAt(blame, 5)?.edit?.citation, "mem:JXRpb4");
  assert.equal(annotationText(blame, 1), "Claude · 2026-03-11 · “Create the cart module with a Cart class that sums item prices” (mem:JXRpb4)");
  assert.equal(annotationText(blame, 11), "Claude · 2026-03-11 · “Add an apply_discount method to the cart” (mem:j9ULpU)");
  assert.equal(annotationText(blame, 12), "Claude (changed since) · 2026-03-11 · “Add an apply_discount method to the cart” (mem:j9ULpU)");
  assert.equal(annotationText(blame, 14), undefined); // not Claude's
  assert.equal(annotationText(blame, 99), undefined);
  assert.equal(annotationText(blame, 1, 20), "Claude · 2026-03-11 · “Create the cart mod…” (mem:JXRpb4)");
  // an edit without its prompt still says what wrote the line
  const bare = blameResult({ ranges: [{ start: 1, end: 1, edit: 7, method: "exact" }], edits: [{ id: 7, tool: "Write", citation: "mem:AAAAAA" }] });
  assert.equal(annotationText(bare, 1), "Claude · Write (mem:AAAAAA)");
  const hover = annotationHover(blame, 12) ?? "";
  assert.match(hover, /^\*\*Claude wrote lines 12-13\*\* \(fuzzy match, 89%: changed since\)/);
  assert.ok(hover.includes("Edit [mem:j9ULpU](command:claudeMemory.openCitation?%5B%22mem%3Aj9ULpU%22%5D) on 2026-03-11 09:20"));
  assert.ok(hover.includes("Asked: “Add an apply\\_discount method to the cart” [mem:FQtSGq](command:"));
  assert.ok(hover.endsWith("[Why is this code like this?](command:claudeMemory.whyThisCode)"));
  assert.equal(annotationHover(blame, 14), undefined);
});

test("blame and why answers are read defensively", () => {
  assert.deepEqual(blameResult(null), { ranges: [], edits: [] });
  assert.deepEqual(blameResult([1, 2]), { ranges: [], edits: [] });
  const odd = blameResult({ ranges: [{ start: 0, end: 2, edit: 1 }, { start: 3, end: 2, edit: 1 }, null, { start: 1, end: 1, edit: null }], edits: [{}, { id: 1 }] });
  assert.deepEqual(odd.ranges, [{ start: 1, end: 1, edit: null }]);
  assert.deepEqual(odd.edits, [{ id: 1 }]);
  assert.deepEqual(claudeLines(odd), []);
});

test("why document: the server's markdown with linked citations; nothing known says so", () => {
  const why = { ...blameResult(whyJson), markdown: whyJson.markdown } as WhyResult;
  assert.equal(whyKnown(why), true);
  const md = renderWhy(why, "cart.py", 10, 13);
  assert.ok(md.startsWith("### cart.py, lines 10-13\n\n- Lines 10-11 (exact): Edit [mem:j9ULpU](../details/j9ULpU.md) on 2026-03-11"));
  assert.ok(md.includes("- Lines 12-13 (fuzzy match, 89%: changed since): Edit [mem:j9ULpU](../details/j9ULpU.md)"));
  assert.ok(md.includes("“Add an apply_discount method to the cart” [mem:FQtSGq](../details/FQtSGq.md)"));
  assert.ok(!/\[mem:\w{6}\](?!\()/.test(md), "every citation is a link");
  const none: WhyResult = {
    markdown: "### cart.py, lines 14-15\n\nClaude did not write these lines (as far as the remembered edits show).\n",
    ranges: [{ start: 14, end: 15, edit: null, confidence: 0, method: null }], edits: [],
  };
  assert.equal(whyKnown(none), false);
  assert.equal(whyNothingMessage(none, "cart.py", 14, 15),
    "Claude Memory: lines 14-15 of cart.py: Claude did not write these lines (as far as the remembered edits show).");
  assert.equal(whyNothingMessage({ markdown: "", ranges: [], edits: [] }, "a.py", 3, 3), "Claude Memory: line 3 of a.py: nothing is remembered about these lines.");
});

const tasks = tasksJson.map(taskInfo).filter((t): t is TaskInfo => t !== undefined);
const task = taskDetail(taskJson) as TaskDetail;

test("tasks group by status: open ones first and expanded, empty groups left out", () => {
  assert.equal(tasks.length, 5);
  const groups = taskGroups(tasks);
  assert.deepEqual(groups.map(g => [g.label, g.open, g.tasks.map(t => t.title)]), [
    ["In progress", true, ["Add input validation to the checkout form"]],
    ["Blocked", true, ["Deploy the checkout service to staging"]],
    ["Pending", true, ["Write the release notes", "Update the README with the discount rules"]],
    ["Done", false, ["Add an apply_discount method to the cart"]],
  ]);
  // the groups' order does not depend on the answer's; a status this client does not know comes last, as sent
  const mixed = taskGroups([{ ...tasks[4], status: "cancelled" }, { ...tasks[0], status: "on_hold" }, tasks[2]]);
  assert.deepEqual(mixed.map(g => [g.status, g.label, g.open]), [["pending", "Pending", true], ["cancelled", "Cancelled", false], ["on_hold", "on hold", false]]);
  assert.deepEqual(taskGroups([]), []);
  assert.equal(taskStatusLabel("in_progress"), "In progress");
});

test("task and blocker tree items: title, last change day and citation; blockers marked suggested or placeholder", () => {
  assert.deepEqual(taskItemData(tasks[0]), {
    label: "Add input validation to the checkout form",
    description: "2026-03-12 · mem:AbC123",
    tooltip: [
      "Add input validation to the checkout form",
      "In progress · /home/dev/shop",
      "Blocked by: Unknown blocker for: x (placeholder)",
      "Maybe blocked by: https://github.com/o/r/issues/3",
      "First seen 2026-03-11 09:00:01, last changed 2026-03-12 10:00:00 UTC (mem:AbC123)",
      "task:/home/dev/shop:add_input_validation_to_the_checkout_form",
    ].join("\n"),
  });
  assert.deepEqual(blockerItemData(tasks[0].blockers[0], false), {
    label: "Unknown blocker for: x",
    description: "condition · placeholder",
    tooltip: "Blocked by (condition): Unknown blocker for: x\nA placeholder: the task was blocked without saying by what.\ncond:/home/dev/shop:unknown_blocker_for_x",
  });
  assert.equal(blockerItemData(tasks[0].blocker_suggestions[0], true).description, "suggested · artifact");
  assert.equal(blockerItemData(tasks[1].blockers[0], false).description, "task · in progress");
  // a task with neither times nor citation
  assert.deepEqual(taskItemData({ id: "task:p:x", title: "X", status: "pending", blockers: [], blocker_suggestions: [] }),
    { label: "X", description: "", tooltip: "X\nPending\ntask:p:x" });
});

test("task document: state, description, blockers, maybe-same tasks, and the history with linked citations", () => {
  const md = renderTask(task);
  assert.ok(md.startsWith("# Add input validation to the checkout form\n\n| Field | Value |\n|---|---|\n| Status | In progress |\n| Project | /home/dev/shop |\n"));
  assert.ok(md.includes("| Task | `task:/home/dev/shop:add_input_validation_to_the_checkout_form` |"));
  assert.ok(md.includes("| Last changed | 2026-03-12 10:00:00 UTC by [mem:AbC123](../details/AbC123.md) |"));
  assert.ok(md.includes("## Description\n\nReject empty names and malformed card numbers before the order is placed; see https://github.com/o/r/issues/3.\n"));
  assert.ok(md.includes("## Blockers\n\n- Unknown blocker for: x (condition, placeholder) · `cond:/home/dev/shop:unknown_blocker_for_x`\n" +
    "- _Suggested:_ https://github.com/o/r/issues/3 (artifact) · `art:url:0123456789ab`\n"));
  assert.ok(md.includes("## Maybe the same task as\n\n- `task:/home/dev/shop:validate_the_checkout_form`\n"));
  const history = md.slice(md.indexOf("## History\n\n") + 12).trim().split("\n");
  assert.deepEqual(history, [
    "- 2026-03-11 09:00:01 · **created** as pending · session `0a1e5c1d` · [mem:Hc3VqA](../details/Hc3VqA.md)",
    "- 2026-03-11 09:00:01 · **suggested blockers set**: `art:url:0123456789ab` · session `0a1e5c1d` · [mem:Hc3VqA](../details/Hc3VqA.md)",
    "- 2026-03-11 09:30:00 · **status changed**: pending → in progress · session `0a1e5c1d` · [mem:Kp7DsE](../details/Kp7DsE.md)",
    "- 2026-03-12 09:59:58 · **transition rejected**: in progress → pending — Invalid transition from in\\_progress to pending · session `7f3b9e20` · [mem:Wn5YtR](../details/Wn5YtR.md)",
    "- 2026-03-12 10:00:00 · **blockers set**: `cond:/home/dev/shop:unknown_blocker_for_x` · session `7f3b9e20` · [mem:AbC123](../details/AbC123.md)",
  ]);
  assert.ok(!/\bmem:\w{6}\](?!\()/.test(md) && !/(?<!\[)mem:\w{6}(?!\])/.test(md), "every citation is a link");
  assert.deepEqual(linkCitations(md), md, "nothing left to link");
  // the bare minimum: no table rows without values, no "undefined"/"null", the empty sections say so
  const bare = renderTask({ id: "task:p:x", title: "X", status: "done", blockers: [], blocker_suggestions: [], description: "", suggested_same: [], history: [] });
  assert.equal(bare, "# X\n\n| Field | Value |\n|---|---|\n| Status | Done |\n| Task | `task:p:x` |\n\n## Blockers\n\n_None._\n\n## History\n\n_No history._\n");
});

test("task history steps: unknown times and citations, cleared blockers, kinds this client does not know", () => {
  assert.equal(taskStepLine({ type: "task_status_changed", timestamp: null, session_id: "", citation: null, from: "blocked", to: "done", reason: "fixed *upstream*" }),
    "- unknown time · **status changed**: blocked → done — fixed \\*upstream\\*");
  assert.equal(taskStepLine({ type: "task_blockers_set", timestamp: "2026-03-12T10:00:00Z", citation: "mem:AbC123", mode: "replace", blockers: [] }),
    "- 2026-03-12 10:00:00 · **blockers cleared** · [mem:AbC123](../details/AbC123.md)");
  assert.equal(taskStepLine({ type: "task_blockers_set", mode: "suggest", blockers: ["task:p:y", { entity_id: "art:jira:pay-42" }, 3] }),
    "- unknown time · **suggested blockers set**: `task:p:y`, `art:jira:pay-42`");
  assert.equal(taskStepLine({ type: "task_priority_changed", timestamp: "2026-03-12T10:00:00Z", citation: "not a citation" }),
    "- 2026-03-12 10:00:00 · **priority changed**");
});

test("tasks answers are read defensively; a task's document name is one path segment", () => {
  assert.equal(taskInfo(null), undefined);
  assert.equal(taskInfo({ title: "no id" }), undefined);
  assert.deepEqual(taskInfo({ id: "task:p:x", blockers: [null, { id: 3 }, { id: "cond:p:y" }], blocker_suggestions: "nope" }), {
    id: "task:p:x", title: "task:p:x", project: null, status: "pending", first_ts: null, last_ts: null, citation: null,
    blockers: [{ id: "cond:p:y", type: undefined, title: "cond:p:y", status: null, placeholder: false, candidates: [] }], blocker_suggestions: [],
  });
  const d = taskDetail({ id: "task:p:x", title: "X", status: "blocked", suggested_same: ["task:p:z", 4], history: [{ type: "task_created" }, { timestamp: "t" }, "x"] });
  assert.deepEqual([d?.description, d?.suggested_same, d?.history], ["", ["task:p:z"], [{ type: "task_created" }]]);
  assert.equal(taskDetail([]), undefined);
  assert.equal(task.history.length, 5);
  assert.equal(taskDocName(task.id), "task-home-dev-shop-add_input_validation_to_the_checkout_form");
  assert.equal(taskDocName("task:C:\\w\\app:fix_it#2"), "task-C-w-app-fix_it-2");
  assert.equal(taskDocName(`task:/p:${"a".repeat(300)}`).length, 105);
});
