import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { LineAnnotations } from "./annotations";
import { MemoryApi } from "./api";
import { createClient, onWorkDone, requester } from "./client";
import { registerCommands } from "./commands";
import { readSettings, SECTION } from "./config";
import { MemoryDocuments, SCHEME } from "./documents";
import { StatusBar } from "./status";
import { InsightsTree, SessionsTree, TasksTree } from "./tree";

export const SESSIONS_VIEW = "claudeMemory.sessionsView";
export const TASKS_VIEW = "claudeMemory.tasksView";
export const INSIGHTS_VIEW = "claudeMemory.insightsView";

/** Everything the extension holds while active (state on an object, not in module globals). */
export class MemoryExtension implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel("Claude Memory", { log: true });
  readonly api: MemoryApi;
  readonly docs: MemoryDocuments;
  readonly tree: SessionsTree;
  readonly tasks: TasksTree;
  readonly insights: InsightsTree;
  readonly status: StatusBar;
  readonly annotations: LineAnnotations;
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private failureShown = false;

  constructor() {
    this.api = new MemoryApi(requester(() => this.ready()));
    this.docs = new MemoryDocuments(() => this.api);
    this.tree = new SessionsTree(() => this.api, () => ({ limit: readSettings().sessionsLimit, eventsLimit: 200 }));
    this.tasks = new TasksTree(() => this.api, () => ({ limit: readSettings().tasksLimit }));
    this.insights = new InsightsTree(() => this.api, () => ({ limit: 100 }));
    this.status = new StatusBar(() => this.api);
    this.annotations = new LineAnnotations(() => this.api, undefined, undefined, m => this.output.debug(m));
  }

  activate(context: vscode.ExtensionContext): void {
    this.disposables.push(
      this.output,
      this.docs,
      this.status,
      this.annotations,
      ...this.annotations.register(),
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this.docs),
      vscode.window.createTreeView(SESSIONS_VIEW, { treeDataProvider: this.tree, showCollapseAll: true }),
      vscode.window.createTreeView(TASKS_VIEW, { treeDataProvider: this.tasks, showCollapseAll: true }),
      vscode.window.createTreeView(INSIGHTS_VIEW, { treeDataProvider: this.insights, showCollapseAll: true }),
      ...registerCommands({
        api: () => this.api,
        docs: this.docs,
        tree: this.tree,
        tasks: this.tasks,
        insights: this.insights,
        status: this.status,
        onWorkDone: (token, listener) => {
          if (!this.client) return { dispose() {} };
          return onWorkDone(this.client, token, listener);
        },
        restart: () => this.restart(),
      }),
      vscode.workspace.onDidChangeConfiguration(e => {
        if (e.affectsConfiguration(`${SECTION}.status.refreshSeconds`)) this.status.schedule(readSettings().statusRefreshSeconds);
        if (e.affectsConfiguration(`${SECTION}.allProjects`)) { this.tree.refresh(); this.tasks.refresh(); this.insights.refresh(); }
        if (e.affectsConfiguration(`${SECTION}.tasks.limit`)) this.tasks.refresh();
        if (e.affectsConfiguration(`${SECTION}.annotations`)) void this.annotations.update();
        if (e.affectsConfiguration(`${SECTION}.server`) || e.affectsConfiguration(`${SECTION}.dataDir`)) {
          void vscode.window.showInformationMessage("Claude Memory: restart the language server to use the new settings?", "Restart")
            .then(a => (a === "Restart" ? vscode.commands.executeCommand("claudeMemory.restartServer") : undefined));
        }
      }),
    );
    context.subscriptions.push(this);
    this.status.schedule(readSettings().statusRefreshSeconds);
    void this.ready().then(() => { void this.status.refresh(); this.tree.refresh(); this.tasks.refresh(); this.insights.refresh(); void this.annotations.update(); }, () => undefined);
  }

  /** The started language client (started once, on first need). */
  ready(): Promise<LanguageClient> {
    if (!this.starting) {
      const client = createClient(this.output, { showResult: (name, md) => this.docs.open(this.docs.setResult(name, md)) });
      this.client = client;
      this.starting = client.start().then(() => client, e => {
        const s = readSettings().server;
        const how = s.pythonPath ? `${s.pythonPath} -m claude_memory ${s.args.join(" ")}` : `${s.command} ${s.args.join(" ")}`;
        this.output.error(`Could not start the language server (${how}): ${e instanceof Error ? e.message : String(e)}`);
        if (!this.failureShown) {
          this.failureShown = true;
          void vscode.window.showErrorMessage(`Claude Memory: could not start "${how}". Check the claudeMemory.server settings.`);
        }
        this.starting = undefined;
        this.client = undefined;
        throw e;
      });
    }
    return this.starting;
  }

  async restart(): Promise<void> {
    this.failureShown = false;
    const old = this.client;
    this.client = undefined;
    this.starting = undefined;
    if (old) await old.stop().catch(() => undefined);
    await this.ready();
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.starting = undefined;
    if (c) await c.stop().catch(() => undefined);
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

let current: MemoryExtension | undefined;

export function activate(context: vscode.ExtensionContext): MemoryExtension {
  current = new MemoryExtension();
  current.activate(context);
  return current;
}

export async function deactivate(): Promise<void> {
  const ext = current;
  current = undefined;
  await ext?.stop();
}
