// The extension against mocks of `vscode` and `vscode-languageclient/node`: what it registers, and which
// server command each palette command sends with which argument.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "./vscode-mock";
import { created, server } from "./lc-mock";
import { activate, deactivate, MemoryExtension } from "../src/extension";
import { serverOptions, commandMiddleware } from "../src/client";
import { COMMANDS } from "../src/commands";
import { ALL_SERVER_COMMANDS, SERVER_COMMANDS } from "../src/serverCommands";
import { SessionsTree } from "../src/tree";
import pkg from "../package.json";
import searchJson from "./fixtures/search.json";
import showJson from "./fixtures/show.json";
import timelineJson from "./fixtures/timeline.json";
import sessionsJson from "./fixtures/sessions.json";
import statsJson from "./fixtures/stats.json";
import statusJson from "./fixtures/status.json";
import importJson from "./fixtures/import.json";
import historyJson from "./fixtures/fileHistory.json";
import sessionTimelineJson from "./fixtures/sessionTimeline.json";
import importProgressJson from "./fixtures/importProgress.json";

const answer = (command: string, arg: { session?: string }) =>
  command === SERVER_COMMANDS.timeline && arg.session ? sessionTimelineJson : ANSWERS[command] ?? null;

const ANSWERS: Record<string, unknown> = {
  [SERVER_COMMANDS.search]: searchJson,
  [SERVER_COMMANDS.show]: showJson,
  [SERVER_COMMANDS.timeline]: timelineJson, // {refs}; {session} answers sessionTimelineJson
  [SERVER_COMMANDS.sessions]: sessionsJson,
  [SERVER_COMMANDS.stats]: statsJson,
  [SERVER_COMMANDS.status]: statusJson,
  [SERVER_COMMANDS.import]: importJson,
  [SERVER_COMMANDS.fileHistory]: historyJson,
  [SERVER_COMMANDS.forget]: { matching: 1, forgotten: 1 }, // the real answer's shape (a dry run gave {matching: 1, forgotten: 0})
};

const subscriptions: { dispose(): void }[] = [];
const ext: MemoryExtension = activate({ subscriptions } as never);

function run(id: string, ...args: unknown[]): Promise<unknown> {
  const fn = vscode.registered[id];
  assert.ok(fn, `command ${id} is registered`);
  return Promise.resolve(fn(...args));
}

const sent = () => server.sent.map(s => [s.command, s.arg]);

beforeEach(async () => {
  await ext.ready();
  await new Promise(r => setImmediate(r)); // let activation's first status/tree refresh finish
  server.reset();
  server.handle = answer;
  vscode.ui.reset();
  vscode.window.activeTextEditor = undefined;
  for (const k of Object.keys(vscode.settings)) delete vscode.settings[k];
  vscode.executed.length = 0;
});

test("activation starts one language client with the settings and registers every contributed command", () => {
  assert.equal(created.length, 1);
  const c = created[0];
  assert.equal(c.started, true);
  assert.equal(c.id, "claudeMemory");
  assert.equal(c.serverOptions.command, "claude-memory");
  assert.deepEqual(c.serverOptions.args, ["lsp"]);
  assert.equal(c.serverOptions.transport, undefined); // TransportKind.stdio would append --stdio
  assert.deepEqual(c.clientOptions.documentSelector, [{ scheme: "file" }, { scheme: "untitled" }]);
  assert.deepEqual(c.clientOptions.initializationOptions, { claudeMemory: {}, client: { name: "vscode", extensionVersion: pkg.version } });
  assert.deepEqual(c.clientOptions.synchronize, { configurationSection: "claudeMemory" });
  const contributed = pkg.contributes.commands.map(c => c.command).sort();
  assert.deepEqual(Object.keys(vscode.registered).sort(), contributed);
  assert.deepEqual(Object.values(COMMANDS).sort(), contributed);
  assert.ok(vscode.providers["claude-memory"], "content provider for claude-memory: documents");
  assert.equal(vscode.treeViews[0].id, "claudeMemory.sessionsView");
  assert.equal(pkg.contributes.views.claudeMemory[0].id, "claudeMemory.sessionsView");
  assert.equal(pkg.contributes.viewsContainers.activitybar[0].title, "Claude Memory");
});

test("palette titles and category are exactly as specified; none collides with a server command", () => {
  const titles = Object.fromEntries(pkg.contributes.commands.map(c => [c.command, c.title]));
  assert.equal(titles[COMMANDS.search], "Search Memory");
  assert.equal(titles[COMMANDS.timeline], "Show Timeline");
  assert.equal(titles[COMMANDS.openCitation], "Open Citation");
  assert.equal(titles[COMMANDS.forget], "Forget Memory");
  assert.equal(titles[COMMANDS.import], "Import Claude Code History");
  assert.equal(titles[COMMANDS.stats], "Show Memory Stats");
  for (const c of pkg.contributes.commands) {
    assert.equal(c.category, "Claude Memory");
    assert.ok(!(ALL_SERVER_COMMANDS as readonly string[]).includes(c.command), `${c.command} would clash with the languageclient's own registration`);
  }
  assert.equal(pkg.version, "0.1.0");
  assert.equal(pkg.publisher, "claude-memory-layer");
});

test("Search Memory: input box -> claudeMemory.search {query, limit, mode} -> QuickPick -> details document", async () => {
  vscode.ui.inputAnswers = ["  hello "];
  const picked = await run(COMMANDS.search);
  assert.equal(picked, "mem:sBS4Lt");
  assert.deepEqual(sent(), [
    ["claudeMemory.search", { query: "hello", limit: 10, mode: "hybrid" }],
    ["claudeMemory.show", { ref: "mem:sBS4Lt" }],
  ]);
  const qp = vscode.ui.quickPicks[0];
  assert.equal(qp.items.length, 3);
  assert.equal(qp.items[0].label, "mem:sBS4Lt  Bash: echo hello-from-mock");
  assert.equal(qp.options.title, 'Claude Memory: 3 results for "hello" (keyword only)');
  assert.equal(qp.options.matchOnDetail, true);
  assert.deepEqual(vscode.ui.shown, ["claude-memory:/details/sBS4Lt.md"]);
  assert.deepEqual(vscode.executed.map(e => e.command), ["markdown.showPreview"]);
  assert.match(vscode.ui.rendered.get("claude-memory:/details/sBS4Lt.md") ?? "", /^# mem:sBS4Lt\n/);
});

test("Search Memory honours settings; no results and cancel are quiet", async () => {
  vscode.settings["claudeMemory.searchLimit"] = 5;
  vscode.settings["claudeMemory.searchMode"] = "keyword";
  vscode.settings["claudeMemory.details.openAs"] = "source";
  vscode.ui.inputAnswers = ["flaky test"];
  await run(COMMANDS.search);
  assert.deepEqual(sent()[0], ["claudeMemory.search", { query: "flaky test", limit: 5, mode: "keyword" }]);
  assert.deepEqual(vscode.executed, []); // opened as source, not as a preview
  assert.deepEqual(vscode.ui.shown, ["claude-memory:/details/sBS4Lt.md"]);
  server.reset();
  server.handle = () => ({ results: [], meta: {} });
  vscode.ui.inputAnswers = ["nothing"];
  await run(COMMANDS.search);
  assert.deepEqual(vscode.ui.infos, ['No memories match "nothing".']);
  vscode.ui.inputAnswers = [undefined];
  server.reset();
  await run(COMMANDS.search);
  assert.deepEqual(sent(), []);
});

test("Open Citation: prefilled from the citation under the cursor -> claudeMemory.show {ref}", async () => {
  vscode.window.activeTextEditor = vscode.editor("# notes\nas decided in [mem:sBS4Lt], see", vscode.Uri.file("/w/notes.md"), 1, 18);
  vscode.ui.inputAnswers = ["mem:sBS4Lt"];
  await run(COMMANDS.openCitation);
  assert.equal(vscode.ui.inputBoxes[0].value, "mem:sBS4Lt");
  assert.equal(vscode.ui.inputBoxes[0].validateInput("nope"), "A citation looks like mem:AbC123");
  assert.equal(vscode.ui.inputBoxes[0].validateInput("mem:AbC123"), undefined);
  assert.deepEqual(sent(), [["claudeMemory.show", { ref: "mem:sBS4Lt" }]]);
  // a tree node or a string argument skips the prompt
  server.reset();
  await run(COMMANDS.openEvent, "mem:YxmCn0");
  await run(COMMANDS.openCitation, { kind: "event", event: { citation: "mem:DJtgPc" } });
  assert.equal(vscode.ui.inputBoxes.length, 1);
  assert.deepEqual(sent(), [["claudeMemory.show", { ref: "mem:YxmCn0" }], ["claudeMemory.show", { ref: "mem:DJtgPc" }]]);
});

test("Show Timeline -> claudeMemory.timeline {refs, before, after}", async () => {
  vscode.settings["claudeMemory.timeline.window"] = 2;
  vscode.ui.inputAnswers = ["sBS4Lt"];
  await run(COMMANDS.timeline);
  assert.deepEqual(sent(), [["claudeMemory.timeline", { refs: ["mem:sBS4Lt"], before: 2, after: 2 }]]);
  const md = vscode.ui.rendered.get("claude-memory:/timeline/sBS4Lt.md?before=2&after=2") ?? "";
  assert.match(md, /^# Timeline: mem:sBS4Lt/);
});

test("Forget Memory: modal naming the memory, then claudeMemory.forget {refs, confirm: true}", async () => {
  vscode.ui.inputAnswers = ["mem:sBS4Lt"];
  vscode.ui.warningAnswer = "Forget";
  await run(COMMANDS.forget);
  assert.deepEqual(sent(), [
    ["claudeMemory.show", { ref: "mem:sBS4Lt" }],
    ["claudeMemory.forget", { refs: ["mem:sBS4Lt"] }],
    ["claudeMemory.status", {}],
  ]);
  const w = vscode.ui.warnings[0];
  assert.deepEqual(w.options, { modal: true });
  assert.deepEqual(w.buttons, ["Forget"]);
  assert.match(w.message, /^Forget mem:sBS4Lt \(tool_use, 2026-11-22 05:57\): "Bash: echo hello-from-mock/);
  assert.deepEqual(vscode.ui.infos, ["Forgot mem:sBS4Lt."]);
  // dismissing the modal forgets nothing
  server.reset();
  server.handle = answer;
  vscode.ui.warningAnswer = undefined;
  vscode.ui.inputAnswers = ["mem:sBS4Lt"];
  await run(COMMANDS.forget);
  assert.deepEqual(sent(), [["claudeMemory.show", { ref: "mem:sBS4Lt" }]]);
});

test("Import Claude Code History: progress notification fed by $/progress, claudeMemory.import {}", async () => {
  server.handle = (command: string, arg: { session?: string }) => {
    if (command !== SERVER_COMMANDS.import) return answer(command, arg);
    const token = server.sent[server.sent.length - 1].params.workDoneToken as string;
    const listener = server.progressListeners.get(token);
    // the $/progress values the real server sent during an import (test/fixtures/importProgress.json)
    for (const p of importProgressJson) listener?.(p.value);
    listener?.({ kind: "report", message: "halfway", percentage: 50 });
    return importJson;
  };
  await run(COMMANDS.import);
  const [imp] = server.sent;
  assert.equal(imp.command, "claudeMemory.import");
  assert.deepEqual(imp.arg, {});
  assert.match(imp.params.workDoneToken, /^claude-memory-import-/);
  assert.equal(server.progressListeners.size, 0, "progress listener disposed");
  assert.equal(vscode.ui.progress[0].options.location, vscode.ProgressLocation.Notification);
  assert.equal(vscode.ui.progress[0].options.title, "Importing Claude Code history");
  assert.deepEqual(vscode.ui.progress.slice(1), [
    { message: "Importing Claude Code history", increment: undefined },
    { message: "Reading transcripts and storing new events…", increment: undefined },
    { message: "Imported 0 new events; 0 of 14 transcripts had new lines.", increment: undefined },
    { message: "halfway", increment: 50 },
  ]);
  assert.deepEqual(vscode.ui.infos, ["Imported 0 new events; 0 of 14 transcripts had new lines."]);
});

test("Show Memory Stats -> claudeMemory.stats {} in a read-only document", async () => {
  await run(COMMANDS.stats);
  const commands = sent().map(s => s[0]);
  assert.ok(commands.includes("claudeMemory.stats"));
  assert.deepEqual(server.sent.find(s => s.command === "claudeMemory.stats")?.arg, {});
  assert.deepEqual(vscode.ui.shown, ["claude-memory:/stats.md"]);
  assert.match(vscode.ui.rendered.get("claude-memory:/stats.md") ?? "", /\*\*661 events\*\* in 12 sessions across 5 projects/);
});

test("Show File History -> claudeMemory.fileHistory {path, symbol?}", async () => {
  vscode.window.activeTextEditor = vscode.editor("def handler():\n    pass", vscode.Uri.file("/w/app.py"), 0, 4, 11);
  await run(COMMANDS.fileHistory);
  assert.deepEqual(sent(), [["claudeMemory.fileHistory", { path: "/w/app.py", symbol: "handler" }]]);
  assert.match(vscode.ui.rendered.get("claude-memory:/result/history-app.py.md") ?? "", /^# History of `\/home\/USER\/projects\/spotter-worktrees\/spotter-dov\/assets\/js\/app.js` · `handler`\n\n15 events touched this file; the newest 3:/);
  server.reset();
  server.handle = answer;
  vscode.window.activeTextEditor = vscode.editor("x = 1", vscode.Uri.file("/w/b.py"), 0, 0);
  await run(COMMANDS.fileHistory);
  assert.deepEqual(sent(), [["claudeMemory.fileHistory", { path: "/w/b.py" }]]);
});

test("server errors become one error message", async () => {
  server.handle = () => new Error("No memory mem:AAAAAA.");
  vscode.ui.inputAnswers = ["q"];
  await run(COMMANDS.search);
  assert.deepEqual(vscode.ui.errors, ["Claude Memory: No memory mem:AAAAAA."]);
});

test("sessions tree: claudeMemory.sessions {limit}, children from claudeMemory.timeline {session, limit}, events open details", async () => {
  const tree: SessionsTree = ext.tree;
  const roots = await tree.getChildren();
  assert.equal(roots.length, 3);
  const item = tree.getTreeItem(roots[0]) as unknown as vscode.TreeItem;
  assert.equal(item.label, "work · 2026-11-22 05:57");
  assert.equal(item.description, "4 events, 1 prompts");
  assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
  const children = await tree.getChildren(roots[0]);
  assert.deepEqual(sent(), [
    ["claudeMemory.sessions", { limit: 50 }],
    ["claudeMemory.timeline", { session: "dc75efdc-6adf-4400-9099-a7992cc138fc", limit: 200 }],
  ]);
  assert.equal(children.length, 4);
  assert.deepEqual(children.map(c => (c.kind === "event" ? c.event.citation : "")), ["mem:eBbWIQ", "mem:B0r4kJ", "mem:sBS4Lt", "mem:iSc89A"]);
  const ev = tree.getTreeItem(children[2]) as unknown as vscode.TreeItem;
  assert.equal(ev.label, "Bash: echo hello-from-mock Print a greeting hello-from-mock");
  assert.equal(ev.description, "tool_use · 2026-11-22 05:57:11 · mem:sBS4Lt");
  assert.equal(ev.contextValue, "memoryEvent");
  assert.deepEqual(ev.command, { command: "claudeMemory.openEvent", title: "Open Memory", arguments: ["mem:sBS4Lt"] });
  await run(ev.command.command, ...ev.command.arguments);
  assert.deepEqual(vscode.ui.shown, ["claude-memory:/details/sBS4Lt.md"]);
  // nothing for this workspace's project
  server.handle = (command: string) => (command === SERVER_COMMANDS.sessions ? [] : null);
  const none = await tree.getChildren();
  assert.match(String((tree.getTreeItem(none[0]) as unknown as vscode.TreeItem).label), /claudeMemory.allProjects/);
  // a failure shows as one message node
  server.handle = () => new Error("service down");
  const failed = await tree.getChildren();
  assert.equal((tree.getTreeItem(failed[0]) as unknown as vscode.TreeItem).label, "Could not load: service down");
});

test("status bar item: claudeMemory.status {} on click and on a timer", async () => {
  const item = vscode.statusItems[0];
  assert.equal(item.visible, true);
  assert.equal(item.command, "claudeMemory.refreshStatus");
  await run(COMMANDS.refreshStatus);
  assert.deepEqual(sent(), [["claudeMemory.status", {}]]);
  assert.equal(item.text, "$(database) Memory: 661 $(warning) keyword only");
  // the periodic refresh never starts a stopped service: {start: false}
  server.reset();
  server.handle = () => ({ running: false, language_server: {} });
  await ext.status.refresh(false);
  assert.deepEqual(sent(), [["claudeMemory.status", { start: false }]]);
  assert.equal(item.text, "$(error) Memory: off");
  server.handle = () => new Error("Could not reach the memory service.");
  await run(COMMANDS.refreshStatus);
  assert.equal(item.text, "$(error) Memory: off");
  assert.equal(item.tooltip, "Claude Memory service not available: Could not reach the memory service.");
});

test("serverOptions: command + args, or python -m claude_memory, with dataDir and env", () => {
  const base = { command: "claude-memory", args: ["lsp"], pythonPath: "", env: {}, dataDir: "" };
  assert.deepEqual(serverOptions(base, { PATH: "/bin" }), { command: "claude-memory", args: ["lsp"], options: { env: { PATH: "/bin" } } });
  assert.deepEqual(serverOptions({ ...base, pythonPath: "/v/bin/python", dataDir: "/data", env: { A: "1" } }, {}),
    { command: "/v/bin/python", args: ["-m", "claude_memory", "lsp"], options: { env: { A: "1", CLAUDE_MEMORY_HOME: "/data" } } });
});

test("settings change the started server: pythonPath via restart", async () => {
  vscode.settings["claudeMemory.server.pythonPath"] = "/venv/bin/python";
  vscode.settings["claudeMemory.server.args"] = ["lsp", "--log-level", "debug"];
  await run(COMMANDS.restartServer);
  const c = created[created.length - 1];
  assert.equal(created.length, 2);
  assert.equal(created[0].started, false, "old client stopped");
  assert.equal(c.started, true);
  assert.equal(c.serverOptions.command, "/venv/bin/python");
  assert.deepEqual(c.serverOptions.args, ["-m", "claude_memory", "lsp", "--log-level", "debug"]);
});

test("server commands run from the UI (code lens, hover link) show their results", async () => {
  const shown: [string, string][] = [];
  const mw = commandMiddleware({ showResult: async (n, md) => { shown.push([n, md]); } });
  const exec = mw.executeCommand!;
  const next = async (command: string) => ANSWERS[command];
  assert.equal(await exec(SERVER_COMMANDS.show, [{ ref: "mem:sBS4Lt" }], next), showJson);
  await exec(SERVER_COMMANDS.timeline, [{ refs: ["mem:sBS4Lt"] }], next);
  // the server's code lens: claudeMemory.fileHistory [{uri}]
  await exec(SERVER_COMMANDS.fileHistory, [{ uri: "file:///home/USER/projects/spotter-worktrees/spotter-dov/assets/js/app.js" }], next);
  await exec(SERVER_COMMANDS.stats, [{}], next);
  assert.deepEqual(shown.map(s => s[0]), ["mem:sBS4Lt", "timeline-mem:sBS4Lt", "history-app.js"]);
  assert.match(shown[0][1], /^# mem:sBS4Lt/);
  assert.match(shown[2][1], /^# History of `\/home\/USER\/projects\/spotter-worktrees\/spotter-dov\/assets\/js\/app.js`/);
});

test("a server that does not start: one error message, commands report it", async () => {
  server.failStart = true;
  vscode.ui.reset();
  await assert.rejects(ext.restart(), /ENOENT/);
  vscode.ui.inputAnswers = ["q"];
  await run(COMMANDS.search);
  assert.equal(vscode.ui.errors.filter(e => e.startsWith("Claude Memory: could not start")).length, 1);
  assert.match(vscode.ui.errors[0], /could not start "claude-memory lsp"\. Check the claudeMemory\.server settings\./);
  assert.ok(vscode.ui.errors.includes("Claude Memory: spawn claude-memory ENOENT"));
  server.failStart = false;
  await ext.restart();
});

test("deactivate stops the client; disposing unregisters commands", async () => {
  await deactivate();
  assert.equal(created[created.length - 1].started, false);
  for (const s of subscriptions) s.dispose();
  assert.deepEqual(Object.keys(vscode.registered), []);
});
