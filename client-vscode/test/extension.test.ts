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
import { InsightNode, InsightsTree, SessionsTree, TaskNode, TasksTree } from "../src/tree";
import { LineAnnotations } from "../src/annotations";
import { initializationOptions, SERVER_SETTING_KEYS } from "../src/config";
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
import blameJson from "./fixtures/blame.json";
import whyJson from "./fixtures/why.json";
import tasksJson from "./fixtures/tasks.json";
import taskJson from "./fixtures/task.json";
import insightsJson from "./fixtures/insights.json";

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
  [SERVER_COMMANDS.tasks]: tasksJson,
  [SERVER_COMMANDS.task]: taskJson,
  [SERVER_COMMANDS.insights]: insightsJson,
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
  vscode.window.activeTextEditor = undefined;
  vscode.window.visibleTextEditors = [];
  for (const k of Object.keys(vscode.settings)) delete vscode.settings[k];
  await ext.annotations.update(); // no editor: every annotation cleared
  server.reset();
  server.handle = answer;
  vscode.ui.reset();
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
  assert.deepEqual(vscode.treeViews.map(v => v.id), ["claudeMemory.sessionsView", "claudeMemory.tasksView", "claudeMemory.insightsView"]);
  assert.deepEqual(pkg.contributes.views.claudeMemory.map(v => [v.id, v.name]), [
    ["claudeMemory.sessionsView", "Sessions"], ["claudeMemory.tasksView", "Tasks"], ["claudeMemory.insightsView", "Insights"],
  ]);
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

const item = (tree: TasksTree, node: TaskNode) => tree.getTreeItem(node) as unknown as vscode.TreeItem;
const icon = (i: vscode.TreeItem) => (i.iconPath as vscode.ThemeIcon).id;

test("tasks tree: claudeMemory.tasks {limit}, grouped by status, blockers as children, a task opens its history", async () => {
  const tree: TasksTree = ext.tasks;
  const roots = await tree.getChildren();
  assert.deepEqual(sent(), [["claudeMemory.tasks", { limit: 200 }]]);
  // groups: open ones expanded, Cancelled (no such task) hidden
  const groups = roots.map(n => item(tree, n));
  assert.deepEqual(groups.map(g => [g.label, g.description, g.collapsibleState, icon(g)]), [
    ["In progress", "1", vscode.TreeItemCollapsibleState.Expanded, "play-circle"],
    ["Blocked", "1", vscode.TreeItemCollapsibleState.Expanded, "circle-slash"],
    ["Pending", "2", vscode.TreeItemCollapsibleState.Expanded, "circle-large-outline"],
    ["Done", "1", vscode.TreeItemCollapsibleState.Collapsed, "pass"],
  ]);
  const [inProgress] = await tree.getChildren(roots[0]);
  const t = item(tree, inProgress);
  assert.equal(t.label, "Add input validation to the checkout form");
  assert.equal(t.description, "2026-03-12 · mem:AbC123");
  assert.equal(t.contextValue, "memoryTask");
  assert.equal(icon(t), "play-circle");
  assert.equal(t.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed, "it has blockers");
  assert.match(String(t.tooltip), /\nBlocked by: Unknown blocker for: x \(placeholder\)\nMaybe blocked by: https:\/\/github\.com\/o\/r\/issues\/3\n/);
  assert.deepEqual(t.command, { command: "claudeMemory.openTask", title: "Open Task", arguments: ["task:/home/dev/shop:add_input_validation_to_the_checkout_form"] });
  const blockers = (await tree.getChildren(inProgress)).map(n => item(tree, n));
  assert.deepEqual(blockers.map(b => [b.label, b.description, b.contextValue, icon(b), b.command]), [
    ["Unknown blocker for: x", "condition · placeholder", "memoryTaskBlocker", "question", undefined],
    ["https://github.com/o/r/issues/3", "suggested · artifact", "memoryTaskSuggestedBlocker", "lightbulb", undefined],
  ]);
  // a task without blockers is a leaf; a blocking task opens as a task
  const pending = (await tree.getChildren(roots[2])).map(n => item(tree, n));
  assert.deepEqual(pending.map(p => [p.label, p.collapsibleState]), [
    ["Write the release notes", vscode.TreeItemCollapsibleState.None], ["Update the README with the discount rules", vscode.TreeItemCollapsibleState.None],
  ]);
  assert.deepEqual(await tree.getChildren((await tree.getChildren(roots[2]))[0]), []);
  const [blocked] = await tree.getChildren(roots[1]);
  const [byTask] = (await tree.getChildren(blocked)).map(n => item(tree, n));
  assert.deepEqual([byTask.description, icon(byTask), byTask.command?.arguments], ["task · in progress", "checklist", [t.command.arguments[0]]]);
  // every item of the tree has its own id
  const all: TaskNode[] = [...roots];
  for (let i = 0; i < all.length; i++) all.push(...(await tree.getChildren(all[i])));
  const ids = all.map(n => item(tree, n).id);
  assert.equal(all.length, 4 + 5 + 3);
  assert.equal(new Set(ids).size, ids.length);

  // clicking the task: claudeMemory.task {id} -> its history as a rendered memory document
  server.reset();
  server.handle = answer;
  await vscode.commands.executeCommand(t.command.command, ...t.command.arguments); // as VS Code runs a clicked item's command
  assert.deepEqual(sent(), [["claudeMemory.task", { id: "task:/home/dev/shop:add_input_validation_to_the_checkout_form" }]]);
  const doc = "claude-memory:/result/task-home-dev-shop-add_input_validation_to_the_checkout_form.md";
  assert.deepEqual(vscode.ui.shown, [doc]);
  assert.deepEqual(vscode.executed.map(e => e.command), ["claudeMemory.openTask", "markdown.showPreview"]); // rendered, not markdown source
  const md = vscode.ui.rendered.get(doc) ?? "";
  assert.match(md, /^# Add input validation to the checkout form\n/);
  assert.ok(md.includes("| Status | In progress |"));
  assert.ok(md.includes("- _Suggested:_ https://github.com/o/r/issues/3 (artifact) · `art:url:0123456789ab`"));
  assert.ok(md.includes("## Maybe the same task as\n\n- `task:/home/dev/shop:validate_the_checkout_form`"));
  assert.ok(md.includes("## History\n\n- 2026-03-11 09:00:01 · **created** as pending · session `0a1e5c1d` · [mem:Hc3VqA](../details/Hc3VqA.md)\n"));
  assert.ok(md.includes("- 2026-03-11 09:30:00 · **status changed**: pending → in progress · session `0a1e5c1d` · [mem:Kp7DsE](../details/Kp7DsE.md)"));
  // a citation link resolves, relative to the task's document, to a details document the extension serves
  assert.equal(new URL("../details/Kp7DsE.md", doc).href, "claude-memory:/details/Kp7DsE.md");
});

test("tasks tree: no tasks leaves the welcome text; failures, refresh, the limit setting; an unknown task is the server's sentence", async () => {
  const tree: TasksTree = ext.tasks;
  server.handle = () => [];
  assert.deepEqual(await tree.getChildren(), [], "no nodes: the view shows its welcome text");
  const welcome = pkg.contributes.viewsWelcome.find(w => w.view === "claudeMemory.tasksView");
  assert.match(welcome?.contents ?? "", /^No tasks are remembered for this workspace's project\. .*\n\[Import Claude Code History\]\(command:claudeMemory\.importHistory\)$/);
  // malformed answers: nothing usable, no crash
  server.handle = () => ({ oops: true });
  assert.deepEqual(await tree.getChildren(), []);
  server.handle = () => [null, 3, { title: "no id" }, { id: "task:p:ok", title: "Ok", status: "done" }];
  const [done] = await tree.getChildren();
  assert.equal(item(tree, done).label, "Done");
  server.handle = () => new Error("service down");
  const failed = await tree.getChildren();
  assert.equal(item(tree, failed[0]).label, "Could not load: service down");
  // the title bar's refresh action
  const menu = pkg.contributes.menus["view/title"].find(m => m.when === "view == claudeMemory.tasksView");
  assert.deepEqual(menu, { command: COMMANDS.refreshTasks, when: "view == claudeMemory.tasksView", group: "navigation@1" });
  assert.equal(pkg.contributes.commands.find(c => c.command === COMMANDS.refreshTasks)?.icon, "$(refresh)");
  let fired = 0;
  const sub = tree.onDidChangeTreeData(() => { fired++; });
  await run(COMMANDS.refreshTasks);
  assert.equal(fired, 1);
  sub.dispose();
  // claudeMemory.tasks.limit
  server.reset();
  server.handle = answer;
  vscode.settings["claudeMemory.tasks.limit"] = 20;
  await tree.getChildren();
  assert.deepEqual(sent(), [["claudeMemory.tasks", { limit: 20 }]]);
  // an unknown id: the server's one sentence, no document
  server.reset();
  const said = "No task task:/w:gone is remembered; `claude-memory tasks` lists them.";
  server.handle = () => new Error(said);
  await run(COMMANDS.openTask, "task:/w:gone");
  assert.deepEqual(vscode.ui.errors, [`Claude Memory: ${said}`]);
  assert.deepEqual(vscode.ui.shown, []);
  // Open Task is not in the palette; without an id it asks nothing
  assert.ok(pkg.contributes.menus.commandPalette.some(m => m.command === COMMANDS.openTask && m.when === "false"));
  server.reset();
  assert.equal(await run(COMMANDS.openTask), undefined);
  assert.deepEqual(sent(), []);
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

// src/shop/cart.py as the fixture blame (test/fixtures/blame.json) saw it: lines 1-9 by a Write, 10-11 by an Edit,
// 12-13 by that Edit but changed since (fuzzy), 14-15 not Claude's.
const CART = [
  "class Cart:", "    def __init__(self):", "        self.items = []", "", "    def add(self, name, price):",
  "        self.items.append((name, price))", "", "    def total(self):", "        return sum(price for _, price in self.items)", "",
  "    def apply_discount(self, percent):", "        return round(self.total() * (100 - percent) / 100, 2)", "",
  "    def clear(self):", "        self.items = []",
].join("\n");
const CART_URI = vscode.Uri.file("/home/dev/shop/src/shop/cart.py");
const blameAnswer = (command: string, arg: { session?: string }) => (command === SERVER_COMMANDS.blame ? blameJson : answer(command, arg));
const debounce = () => new Promise(r => setTimeout(r, 250));
const key = (t: unknown) => (t as { key: string }).key;
const move = (ed: ReturnType<typeof vscode.editor>, line: number, character = 0) => {
  ed.selection = new vscode.Selection(new vscode.Position(line, character), new vscode.Position(line, character));
  vscode.events.selection.fire({ textEditor: ed, selections: [ed.selection] });
};

test("current-line annotation: who wrote the cursor's line when Claude did, cleared elsewhere; one blame per version", async () => {
  server.handle = blameAnswer;
  const ed = vscode.editor(CART, CART_URI, 0, 0);
  vscode.window.activeTextEditor = ed;
  vscode.window.visibleTextEditors = [ed];
  const lineKey = key(ext.annotations.types.currentLine);
  move(ed, 11, 8); // line 12: Claude's Edit, changed since
  await debounce();
  assert.deepEqual(sent(), [["claudeMemory.blame", { uri: "file:///home/dev/shop/src/shop/cart.py" }]]);
  const [d] = ed.decorations.get(lineKey) ?? [];
  assert.equal(d.renderOptions.after.contentText, "Claude (changed since) · 2026-03-11 · “Add an apply_discount method to the cart” (mem:j9ULpU)");
  assert.deepEqual(d.range, new vscode.Range(11, 61, 11, 61)); // after the line's text
  assert.match(d.hoverMessage.value, /^\*\*Claude wrote lines 12-13\*\* \(fuzzy match, 89%: changed since\)/);
  assert.deepEqual(d.hoverMessage.isTrusted, { enabledCommands: ["claudeMemory.openCitation", "claudeMemory.whyThisCode"] });
  const type = vscode.decorationTypes.find(t => t.key === lineKey);
  assert.equal(type?.options.after.margin, "0 0 0 3em");
  // a line Claude did not write: the annotation goes at once, and nothing new is asked (same version)
  move(ed, 13);
  assert.deepEqual(ed.decorations.get(lineKey), []);
  await debounce();
  assert.deepEqual(ed.decorations.get(lineKey), []);
  move(ed, 0);
  await debounce();
  assert.equal(ed.decorations.get(lineKey)?.[0].renderOptions.after.contentText,
    "Claude · 2026-03-11 · “Create the cart module with a Cart class that sums item prices” (mem:JXRpb4)");
  assert.equal(server.sent.length, 1, "the blame of version 1 was asked once");
  // a new version is blamed again
  ed.document.version = 2;
  vscode.events.documentChange.fire({ document: ed.document, contentChanges: [{}] });
  assert.deepEqual(ed.decorations.get(lineKey), [], "typing hides the annotation until the new blame");
  await debounce();
  assert.equal(server.sent.length, 2);
  assert.equal(ed.decorations.get(lineKey)?.length, 1);
  // the setting off clears it (Toggle Line Annotations), back on shows it again
  assert.equal(await run(COMMANDS.toggleLineAnnotations), false);
  assert.equal(vscode.settings["claudeMemory.annotations.currentLine"], false);
  await ext.annotations.update();
  assert.deepEqual(ed.decorations.get(lineKey), []);
  assert.equal(await run(COMMANDS.toggleLineAnnotations), true);
  await ext.annotations.update();
  assert.equal(ed.decorations.get(lineKey)?.length, 1);
  // another editor (not a file): the first one's annotation goes, nothing is asked
  const notes = vscode.editor("mem:sBS4Lt", vscode.Uri.parse("untitled:notes"), 0, 0);
  vscode.window.activeTextEditor = notes;
  vscode.events.activeEditor.fire(notes);
  assert.deepEqual(ed.decorations.get(lineKey), []);
  await debounce();
  assert.equal(server.sent.length, 2);
  assert.equal(notes.decorations.get(lineKey), undefined);
});

test("blames are cached per document version and asked again after refreshMs; a failure shows nothing", async () => {
  server.handle = blameAnswer;
  const doc = vscode.editor(CART, vscode.Uri.file("/w/cached.py"), 0, 0).document as never;
  const fresh = new LineAnnotations(() => ext.api, () => ({ currentLine: true, gutter: false }), { refreshMs: 0 });
  const kept = new LineAnnotations(() => ext.api, () => ({ currentLine: true, gutter: false }), { refreshMs: 60_000 });
  await Promise.all([kept.blameOf(doc), kept.blameOf(doc)]);
  await kept.blameOf(doc);
  assert.equal(server.sent.length, 1, "one request for concurrent and later asks of one version");
  await fresh.blameOf(doc);
  await fresh.blameOf(doc);
  assert.equal(server.sent.length, 3, "asked again once refreshMs has passed");
  server.handle = () => new Error("service down");
  const failing = new LineAnnotations(() => ext.api);
  assert.equal(await failing.blameOf(doc), undefined);
  assert.equal((await fresh.blameOf(doc))?.claude_lines, 13, "a failed refresh keeps the last blame");
  for (const a of [fresh, kept, failing]) a.dispose();
});

test("gutter annotations (setting on): every line Claude wrote in the visible file editors, fuzzy ones apart", async () => {
  server.handle = blameAnswer;
  vscode.settings["claudeMemory.annotations.gutter"] = true;
  const ed = vscode.editor(CART, vscode.Uri.file("/home/dev/shop/src/shop/cart2.py"), 0, 0);
  const other = vscode.editor("x", vscode.Uri.parse("untitled:x"), 0, 0);
  vscode.window.visibleTextEditors = [ed, other];
  const { gutter, gutterFuzzy } = ext.annotations.types;
  await ext.annotations.update();
  assert.deepEqual(sent(), [["claudeMemory.blame", { uri: "file:///home/dev/shop/src/shop/cart2.py" }]]);
  assert.deepEqual(ed.decorations.get(key(gutter)), [new vscode.Range(0, 0, 8, 0), new vscode.Range(9, 0, 10, 0)]);
  assert.deepEqual(ed.decorations.get(key(gutterFuzzy)), [new vscode.Range(11, 0, 12, 0)]);
  assert.equal(other.decorations.size, 0);
  const styles = [gutter, gutterFuzzy].map(t => vscode.decorationTypes.find(x => x.key === key(t))?.options);
  assert.deepEqual(styles.map(o => [o.isWholeLine, o.borderStyle, o.borderWidth, o.overviewRulerLane]),
    [[true, "solid", "0 0 0 2px", vscode.OverviewRulerLane.Left], [true, "dotted", "0 0 0 2px", vscode.OverviewRulerLane.Left]]);
  assert.notDeepEqual(styles[0].borderColor, styles[1].borderColor);
  const colors = pkg.contributes.colors.map(c => c.id);
  for (const o of styles) assert.ok(colors.includes(o.borderColor.id) && colors.includes(o.overviewRulerColor.id), o.borderColor.id);
  const line = vscode.decorationTypes.find(x => x.key === key(ext.annotations.types.currentLine))?.options;
  assert.ok(colors.includes(line.after.color.id));
  // Toggle Gutter Annotations: off clears the marks
  assert.equal(await run(COMMANDS.toggleGutterAnnotations), false);
  await ext.annotations.update();
  assert.deepEqual(ed.decorations.get(key(gutter)), []);
  assert.deepEqual(ed.decorations.get(key(gutterFuzzy)), []);
  // the setting's default is off, and no blame is asked for then
  server.reset();
  delete vscode.settings["claudeMemory.annotations.gutter"];
  await ext.annotations.update();
  assert.deepEqual(sent(), []);
});

test("Why Is This Code Like This? -> claudeMemory.why {uri, startLine, endLine} for the selection, opens the story", async () => {
  server.handle = (command: string, arg: { session?: string }) => (command === SERVER_COMMANDS.why ? whyJson : answer(command, arg));
  const ed = vscode.editor(CART, CART_URI, 0, 0);
  // lines 10-13 selected (the selection ends at the start of line 14, which is not taken in)
  ed.selection = new vscode.Selection(new vscode.Position(13, 0), new vscode.Position(9, 0));
  vscode.window.activeTextEditor = ed;
  await run(COMMANDS.why);
  assert.deepEqual(sent(), [["claudeMemory.why", { uri: "file:///home/dev/shop/src/shop/cart.py", startLine: 10, endLine: 13 }]]);
  const doc = "claude-memory:/result/why-cart.py-10-13.md";
  assert.deepEqual(vscode.ui.shown, [doc]);
  assert.deepEqual(vscode.executed.map(e => e.command), ["markdown.showPreview"]); // rendered, not markdown source
  const md = vscode.ui.rendered.get(doc) ?? "";
  assert.match(md, /^### cart\.py, lines 10-13\n\n- Lines 10-11 \(exact\): Edit \[mem:j9ULpU\]\(\.\.\/details\/j9ULpU\.md\) on 2026-03-11/);
  assert.ok(md.includes("- Lines 12-13 (fuzzy match, 89%: changed since)"));
  // a citation link resolves, relative to the document, to a details document the extension serves
  const target = new URL("../details/j9ULpU.md", doc).href;
  assert.equal(target, "claude-memory:/details/j9ULpU.md");
  server.reset();
  server.handle = answer;
  assert.match(await vscode.providers["claude-memory"].provideTextDocumentContent(vscode.Uri.parse(target)), /^# mem:sBS4Lt/);
  assert.deepEqual(sent(), [["claudeMemory.show", { ref: "mem:j9ULpU" }]]);
  // the cursor's line from the context menu (the URI argument); nothing known: a message, no document
  server.reset();
  vscode.ui.reset();
  server.handle = () => ({
    markdown: "### cart.py, line 14\n\nClaude did not write these lines (as far as the remembered edits show).\n",
    path: "/home/dev/shop/src/shop/cart.py", ranges: [{ start: 14, end: 14, edit: null, confidence: 0, method: null }], edits: [],
  });
  ed.selection = new vscode.Selection(new vscode.Position(13, 4), new vscode.Position(13, 4));
  await run(COMMANDS.why, CART_URI);
  assert.deepEqual(sent(), [["claudeMemory.why", { uri: "file:///home/dev/shop/src/shop/cart.py", startLine: 14, endLine: 14 }]]);
  assert.deepEqual(vscode.ui.infos, ["Claude Memory: line 14 of cart.py: Claude did not write these lines (as far as the remembered edits show)."]);
  assert.deepEqual(vscode.ui.shown, []);
  // no file in the editor: nothing is asked
  server.reset();
  vscode.window.activeTextEditor = vscode.editor("x", vscode.Uri.parse("untitled:x"), 0, 0);
  await run(COMMANDS.why);
  assert.deepEqual(sent(), []);
  assert.equal(vscode.ui.infos[1], "Open a file and put the cursor on the lines to explain.");
});

test("provenance settings: declared with their defaults, and the server's reach it", () => {
  const props = pkg.contributes.configuration.properties as Record<string, { type: string; default: unknown }>;
  assert.deepEqual(props["claudeMemory.annotations.currentLine"], { ...props["claudeMemory.annotations.currentLine"], type: "boolean", default: true });
  assert.deepEqual(props["claudeMemory.annotations.gutter"], { ...props["claudeMemory.annotations.gutter"], type: "boolean", default: false });
  for (const k of ["hoverProvenance", "codeLensProvenance"]) {
    assert.equal(props[`claudeMemory.${k}`].default, true);
    assert.ok((SERVER_SETTING_KEYS as readonly string[]).includes(k));
  }
  vscode.settings["claudeMemory.hoverProvenance"] = false;
  vscode.settings["claudeMemory.codeLensProvenance"] = true;
  assert.deepEqual(initializationOptions().claudeMemory, { hoverProvenance: false, codeLensProvenance: true });
  const titles = Object.fromEntries(pkg.contributes.commands.map(c => [c.command, c.title]));
  assert.equal(titles[COMMANDS.why], "Why Is This Code Like This?");
  assert.ok(pkg.contributes.menus["editor/context"].some(m => m.command === COMMANDS.why && m.when === "resourceScheme == file"));
  assert.deepEqual(Object.values(SERVER_COMMANDS).slice(-6),
    ["claudeMemory.fileHistory", "claudeMemory.blame", "claudeMemory.why", "claudeMemory.tasks", "claudeMemory.task", "claudeMemory.insights"]);
});

const insight = (tree: InsightsTree, node: InsightNode) => tree.getTreeItem(node) as unknown as vscode.TreeItem;

test("insights tree: claudeMemory.insights {limit}, pinned first, each preference expanding to the prompts that stated it", async () => {
  const tree: InsightsTree = ext.insights;
  const roots = await tree.getChildren();
  assert.deepEqual(sent(), [["claudeMemory.insights", { limit: 100 }]]);
  const items = roots.map(n => insight(tree, n));
  assert.deepEqual(items.map(i => [i.label, i.description, icon(i), i.contextValue]), [
    ["always use pnpm in this repo, never npm", "2× · pinned", "pinned", "memoryPreference"],
    ["use ruff instead of black for formatting", "1×", "check", "memoryPreference"],
    ["never push to main without running the tests", "1×", "circle-slash", "memoryPreference"],
  ]);
  assert.match(String(items[0].tooltip), /^always use pnpm in this repo, never npm\nA preference, stated 2 times in \/home\/dev\/shop\n/);
  const statements = (await tree.getChildren(roots[0])).map(n => insight(tree, n));
  const [first] = insightsJson.preferences[0].evidence;
  assert.deepEqual(statements.map(s => [s.label, s.description]), [
    ["always use pnpm in this repo, never npm", `2026-03-10 · ${first.citation}`],
    ["pnpm only please.", `2026-03-11 · ${insightsJson.preferences[0].evidence[1].citation}`],
  ]);
  assert.deepEqual(statements[0].command, { command: "claudeMemory.openEvent", title: "Open Memory", arguments: [first.citation] });
  const all = [...roots, ...(await tree.getChildren(roots[0])), ...(await tree.getChildren(roots[1]))];
  assert.equal(new Set(all.map(n => insight(tree, n).id)).size, all.length);
});

test("insights tree: none leaves the welcome text; failures, malformed answers and the refresh action", async () => {
  const tree: InsightsTree = ext.insights;
  server.handle = () => ({ preferences: [], topics: [] });
  assert.deepEqual(await tree.getChildren(), []);
  assert.match(pkg.contributes.viewsWelcome.find(w => w.view === "claudeMemory.insightsView")?.contents ?? "", /^No preferences are remembered/);
  server.handle = () => ({ preferences: [null, { id: 3 }, { id: "pref:x", text: "use uv", evidence: "no" }] });
  const [only] = await tree.getChildren();
  assert.equal(insight(tree, only).label, "use uv");
  assert.deepEqual(await tree.getChildren(only), []);
  server.handle = () => new Error("service down");
  assert.equal(insight(tree, (await tree.getChildren())[0]).label, "Could not load: service down");
  const menu = pkg.contributes.menus["view/title"].find(m => m.when === "view == claudeMemory.insightsView");
  assert.deepEqual(menu, { command: COMMANDS.refreshInsights, when: "view == claudeMemory.insightsView", group: "navigation@1" });
  let fired = 0;
  const sub = tree.onDidChangeTreeData(() => { fired++; });
  await run(COMMANDS.refreshInsights);
  assert.equal(fired, 1);
  sub.dispose();
});

test("deactivate stops the client; disposing unregisters commands", async () => {
  await deactivate();
  assert.equal(created[created.length - 1].started, false);
  for (const s of subscriptions) s.dispose();
  assert.deepEqual(Object.keys(vscode.registered), []);
});
