import * as vscode from "vscode";
import { MemoryApi } from "./api";
import { readSettings, SECTION } from "./config";
import { docUri, MemoryDocuments } from "./documents";
import {
  citationAt, forgetPrompt, importSummary, LINKED_COMMANDS, normalizeCitation, renderFileHistory, renderTask, renderWhy, searchPickItems,
  SearchPickItem, taskDocName, whyKnown, whyNothingMessage,
} from "./render";
import { StatusBar, REFRESH_STATUS_COMMAND } from "./status";
import { InsightsTree, OPEN_EVENT_COMMAND, OPEN_TASK_COMMAND, SessionsTree, TasksTree } from "./tree";
import type { DetailsItem } from "./types";

/** The extension's own VS Code commands. They must differ from the server's command names, which
 * vscode-languageclient registers itself when the server advertises them. */
export const COMMANDS = {
  search: "claudeMemory.searchMemory",
  timeline: "claudeMemory.showTimeline",
  openCitation: LINKED_COMMANDS.openCitation,
  forget: "claudeMemory.forgetMemory",
  import: "claudeMemory.importHistory",
  stats: "claudeMemory.showStats",
  fileHistory: "claudeMemory.showFileHistory",
  refreshSessions: "claudeMemory.refreshSessions",
  refreshTasks: "claudeMemory.refreshTasks",
  refreshInsights: "claudeMemory.refreshInsights",
  openTask: OPEN_TASK_COMMAND,
  refreshStatus: REFRESH_STATUS_COMMAND,
  restartServer: "claudeMemory.restartServer",
  openEvent: OPEN_EVENT_COMMAND,
  why: LINKED_COMMANDS.why,
  toggleLineAnnotations: "claudeMemory.toggleLineAnnotations",
  toggleGutterAnnotations: "claudeMemory.toggleGutterAnnotations",
} as const;

export interface WorkDoneValue { kind: "begin" | "report" | "end"; title?: string; message?: string; percentage?: number }

export interface Deps {
  api: () => MemoryApi;
  docs: MemoryDocuments;
  tree: SessionsTree;
  tasks: TasksTree;
  insights: InsightsTree;
  status: StatusBar;
  /** Listen to `$/progress` for a work-done token. */
  onWorkDone: (token: string, listener: (v: WorkDoneValue) => void) => vscode.Disposable;
  restart: () => Promise<void>;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A citation from a command argument (string, tree node, search item), or undefined. */
export function citationFromArg(arg: unknown): string | undefined {
  if (typeof arg === "string") return normalizeCitation(arg);
  if (arg && typeof arg === "object") {
    const o = arg as { citation?: unknown; event?: { citation?: unknown } };
    if (typeof o.citation === "string") return normalizeCitation(o.citation);
    if (o.event && typeof o.event.citation === "string") return normalizeCitation(o.event.citation);
  }
  return undefined;
}

/** A task id from a command argument (the id, or a Tasks view node: a task, or a blocker that is a task). */
export function taskIdFromArg(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg.trim() || undefined;
  if (arg && typeof arg === "object") {
    const o = arg as { task?: { id?: unknown }; blocker?: { id?: unknown; type?: unknown } };
    if (o.blocker) return o.blocker.type === "task" && typeof o.blocker.id === "string" ? o.blocker.id : undefined;
    if (o.task && typeof o.task.id === "string") return o.task.id;
  }
  return undefined;
}

/** The citation under the cursor (or in the selection) of the active editor. */
export function citationAtCursor(): string | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed) return undefined;
  const sel = ed.selection;
  if (sel && !sel.isEmpty) {
    const c = normalizeCitation(ed.document.getText(sel));
    if (c) return c;
  }
  const pos = sel?.active;
  return pos ? citationAt(ed.document.lineAt(pos.line).text, pos.character) : undefined;
}

/** The 1-based lines of a selection (the cursor's line when empty); a selection that ends at the start of a
 * line does not take that line in. */
export function selectedLines(sel: vscode.Selection): { start: number; end: number } {
  const start = sel.start.line + 1;
  let end = sel.end.line + 1;
  if (end > start && sel.end.character === 0) end -= 1;
  return { start, end };
}

function fileName(uri: vscode.Uri): string {
  return uri.fsPath.split(/[\\/]/).pop() || uri.fsPath;
}

/** Flip a boolean setting where it is set (workspace or user settings); returns the new value. */
async function toggleSetting(key: string, current: boolean): Promise<boolean> {
  const c = vscode.workspace.getConfiguration(SECTION);
  const where = c.inspect?.(key);
  const target = where?.workspaceFolderValue !== undefined ? vscode.ConfigurationTarget.WorkspaceFolder
    : where?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await c.update(key, !current, target);
  return !current;
}

async function askCitation(arg: unknown, prompt: string): Promise<string | undefined> {
  const given = citationFromArg(arg);
  if (given) return given;
  const value = await vscode.window.showInputBox({
    title: "Claude Memory",
    prompt,
    placeHolder: "mem:AbC123",
    value: citationAtCursor() ?? "",
    validateInput: v => (normalizeCitation(v) ? undefined : "A citation looks like mem:AbC123"),
  });
  return value === undefined ? undefined : normalizeCitation(value);
}

export function registerCommands(deps: Deps): vscode.Disposable[] {
  const { docs, tree, tasks, insights, status } = deps;
  const guarded = (id: string, fn: (...args: unknown[]) => Promise<unknown>) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (e) {
        void vscode.window.showErrorMessage(`Claude Memory: ${message(e)}`);
        return undefined;
      }
    });

  return [
    guarded(COMMANDS.search, async (arg?: unknown) => {
      const s = readSettings();
      const ed = vscode.window.activeTextEditor;
      const selected = ed && !ed.selection.isEmpty ? ed.document.getText(ed.selection).trim() : "";
      const query = typeof arg === "string" && arg ? arg : await vscode.window.showInputBox({
        title: "Search Memory", prompt: "Search everything Claude Code sessions did and said", value: selected.slice(0, 200),
      });
      if (!query || !query.trim()) return undefined;
      const result = await deps.api().search({ query: query.trim(), limit: s.searchLimit, mode: s.searchMode });
      const items = searchPickItems(result);
      if (!items.length) {
        void vscode.window.showInformationMessage(`No memories match "${query.trim()}".`);
        return undefined;
      }
      const degraded = typeof result.meta?.degraded === "string" ? " (keyword only)" : "";
      const picked = await vscode.window.showQuickPick<SearchPickItem>(items, {
        title: `Claude Memory: ${items.length} results for "${query.trim()}"${degraded}`,
        placeHolder: "Pick a memory to open its details",
        matchOnDescription: true,
        matchOnDetail: true,
      });
      if (picked) await docs.open(docUri.details(picked.citation));
      return picked?.citation;
    }),

    guarded(COMMANDS.openCitation, async (arg?: unknown) => {
      const c = await askCitation(arg, "Open which memory?");
      if (c) await docs.open(docUri.details(c));
      return c;
    }),

    guarded(COMMANDS.openEvent, async (arg?: unknown) => {
      const c = citationFromArg(arg);
      if (c) await docs.open(docUri.details(c));
      return c;
    }),

    guarded(COMMANDS.timeline, async (arg?: unknown) => {
      const c = await askCitation(arg, "Show the timeline around which memory?");
      if (!c) return undefined;
      const w = readSettings().timelineWindow;
      await docs.open(docUri.timeline(c, w, w));
      return c;
    }),

    guarded(COMMANDS.forget, async (arg?: unknown) => {
      const c = await askCitation(arg, "Forget which memory?");
      if (!c) return undefined;
      let d: DetailsItem | undefined;
      try {
        d = await deps.api().show({ ref: c });
      } catch {
        d = undefined;
      }
      const answer = await vscode.window.showWarningMessage(forgetPrompt(c, d), { modal: true }, "Forget");
      if (answer !== "Forget") return undefined;
      const r = await deps.api().forget({ refs: [c] });
      const n = r.forgotten ?? 0;
      void vscode.window.showInformationMessage(n ? `Forgot ${c}.` : `Nothing forgotten: ${c} was not found.`);
      tree.refresh();
      tasks.refresh();
      insights.refresh();
      void status.refresh();
      return r;
    }),

    guarded(COMMANDS.import, async () => {
      const report = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Importing Claude Code history", cancellable: false },
        async progress => {
          const token = `claude-memory-import-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
          let last = 0;
          const sub = deps.onWorkDone(token, v => {
            const pct = typeof v.percentage === "number" ? v.percentage : undefined;
            progress.report({ message: v.message ?? v.title, increment: pct !== undefined && pct > last ? pct - last : undefined });
            if (pct !== undefined) last = Math.max(last, pct);
          });
          try {
            return await deps.api().import({}, token);
          } finally {
            sub.dispose();
          }
        });
      void vscode.window.showInformationMessage(importSummary(report));
      tree.refresh();
      tasks.refresh();
      insights.refresh();
      void status.refresh();
      return report;
    }),

    guarded(COMMANDS.stats, async () => {
      await docs.open(docUri.stats());
      void status.refresh();
    }),

    guarded(COMMANDS.fileHistory, async (arg?: unknown) => {
      const ed = vscode.window.activeTextEditor;
      const uri = arg instanceof vscode.Uri ? arg : ed?.document.uri;
      if (!uri || uri.scheme !== "file") {
        void vscode.window.showInformationMessage("Open a file first.");
        return undefined;
      }
      // a selected identifier narrows the history to that symbol
      const sel = ed && ed.document.uri.toString() === uri.toString() && !ed.selection.isEmpty ? ed.document.getText(ed.selection).trim() : "";
      const symbol = /^[\w.$]{1,200}$/.test(sel) ? sel : undefined;
      const history = await deps.api().fileHistory(symbol ? { path: uri.fsPath, symbol } : { path: uri.fsPath });
      const base = uri.fsPath.split(/[\\/]/).pop() ?? uri.fsPath;
      await docs.open(docs.setResult(`history-${base}`, renderFileHistory(history, uri.fsPath, symbol)));
      return history;
    }),

    guarded(COMMANDS.why, async (arg?: unknown) => {
      const ed = vscode.window.activeTextEditor;
      const uri = arg instanceof vscode.Uri ? arg : ed?.document.uri;
      if (!ed || !uri || uri.scheme !== "file" || ed.document.uri.toString() !== uri.toString()) {
        void vscode.window.showInformationMessage("Open a file and put the cursor on the lines to explain.");
        return undefined;
      }
      const { start, end } = selectedLines(ed.selection);
      const r = await deps.api().why({ uri: uri.toString(), startLine: start, endLine: end });
      const name = fileName(uri);
      if (!whyKnown(r)) {
        void vscode.window.showInformationMessage(whyNothingMessage(r, name, start, end));
        return r;
      }
      await docs.open(docs.setResult(`why-${name}-${start}-${end}`, renderWhy(r, name, start, end)));
      return r;
    }),

    guarded(COMMANDS.openTask, async (arg?: unknown) => {
      const id = taskIdFromArg(arg);
      if (!id) return undefined;
      const d = await deps.api().task({ id });
      if (!d) {
        void vscode.window.showInformationMessage(`Claude Memory: no task ${id} is remembered.`);
        return undefined;
      }
      await docs.open(docs.setResult(taskDocName(d.id), renderTask(d)));
      return d;
    }),

    guarded(COMMANDS.toggleLineAnnotations, async () =>
      toggleSetting("annotations.currentLine", readSettings().annotations.currentLine)),
    guarded(COMMANDS.toggleGutterAnnotations, async () => toggleSetting("annotations.gutter", readSettings().annotations.gutter)),

    guarded(COMMANDS.refreshSessions, async () => tree.refresh()),
    guarded(COMMANDS.refreshTasks, async () => tasks.refresh()),
    guarded(COMMANDS.refreshInsights, async () => insights.refresh()),
    guarded(COMMANDS.refreshStatus, async () => status.refresh()),
    guarded(COMMANDS.restartServer, async () => {
      await deps.restart();
      tree.refresh();
      tasks.refresh();
      return status.refresh();
    }),
  ];
}
