// Hand-written mock of the parts of the `vscode` API the extension uses. Tests script the user's answers
// through `ui` and read back what the extension did (messages, opened documents, registered commands).
/* eslint-disable @typescript-eslint/no-explicit-any */
type Fn = (...a: any[]) => any;

export const registered: Record<string, Fn> = {};
export const providers: Record<string, any> = {};
export const settings: Record<string, unknown> = {};
export const executed: { command: string; args: unknown[] }[] = [];

export const ui = {
  inputAnswers: [] as (string | undefined)[],
  inputBoxes: [] as any[],
  pickAnswer: (items: any[]) => items[0] as any,
  quickPicks: [] as { items: any[]; options: any }[],
  warningAnswer: undefined as string | undefined,
  warnings: [] as { message: string; options: any; buttons: string[] }[],
  infos: [] as string[],
  errors: [] as string[],
  progress: [] as any[],
  shown: [] as string[], // URIs opened (text editor or markdown preview)
  rendered: new Map<string, string>(), // URI -> content provided for it
  reset() {
    this.inputAnswers = []; this.inputBoxes = []; this.quickPicks = []; this.warnings = []; this.infos = [];
    this.errors = []; this.progress = []; this.shown = []; this.rendered.clear(); this.warningAnswer = undefined;
    this.pickAnswer = (items: any[]) => items[0];
  },
};

export class Disposable { constructor(private readonly fn: () => void = () => {}) {} dispose() { this.fn(); } }

export class EventEmitter<T> {
  listeners: ((e: T) => void)[] = [];
  event = (l: (e: T) => void) => { this.listeners.push(l); return new Disposable(); };
  fire(e: T) { for (const l of this.listeners) l(e); }
  dispose() { this.listeners = []; }
}

export class Uri {
  constructor(public scheme: string, public path: string, public query: string, public fsPath: string) {}
  static parse(s: string): Uri {
    const m = /^([a-z][\w+.-]*):(?:\/\/[^/]*)?([^?#]*)(?:\?([^#]*))?/i.exec(s);
    if (!m) throw new Error("bad uri " + s);
    return new Uri(m[1], m[2], m[3] ?? "", m[2]);
  }
  static file(p: string): Uri { return new Uri("file", p, "", p); }
  toString(): string { return `${this.scheme}:${this.path}${this.query ? "?" + this.query : ""}`; }
}

export enum TreeItemCollapsibleState { None = 0, Collapsed = 1, Expanded = 2 }
export class TreeItem {
  id?: string; description?: string; tooltip?: string; contextValue?: string; iconPath?: unknown; command?: any;
  constructor(public label: string, public collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None) {}
}
export class ThemeIcon { constructor(public id: string) {} }
export class ThemeColor { constructor(public id: string) {} }
export enum StatusBarAlignment { Left = 1, Right = 2 }
export enum ProgressLocation { SourceControl = 1, Window = 10, Notification = 15 }

export const statusItems: any[] = [];
export const treeViews: any[] = [];

export class Position { constructor(public line: number, public character: number) {} }
export class Selection {
  constructor(public anchor: Position, public active: Position) {}
  get isEmpty() { return this.anchor.line === this.active.line && this.anchor.character === this.active.character; }
}

/** A text editor over `text`, cursor at (line, character), optional selection end. */
export function editor(text: string, uri: Uri, line: number, character: number, endCharacter?: number) {
  const lines = text.split("\n");
  const sel = new Selection(new Position(line, character), new Position(line, endCharacter ?? character));
  return {
    selection: sel,
    document: {
      uri,
      lineAt: (l: number) => ({ text: lines[l] ?? "" }),
      getText: (r?: Selection) => (r ? lines[r.anchor.line].slice(r.anchor.character, r.active.character) : text),
      getWordRangeAtPosition: () => undefined,
    },
  };
}

async function render(uri: Uri): Promise<string> {
  const p = providers[uri.scheme];
  const text = p ? await p.provideTextDocumentContent(uri) : "";
  ui.rendered.set(uri.toString(), text);
  return text;
}

export const window = {
  activeTextEditor: undefined as any,
  createOutputChannel: (_n: string, _o?: unknown) => ({
    appendLine: (_s: string) => {}, info: (_s: string) => {}, warn: (_s: string) => {}, error: (_s: string) => {},
    debug: (_s: string) => {}, trace: (_s: string) => {}, show: () => {}, dispose: () => {},
  }),
  createStatusBarItem: (id: string, alignment: StatusBarAlignment, priority: number) => {
    const item: any = { id, alignment, priority, text: "", tooltip: "", visible: false, show() { item.visible = true; }, hide() { item.visible = false; }, dispose() {} };
    statusItems.push(item);
    return item;
  },
  createTreeView: (id: string, options: any) => { const v = { id, options, dispose() {} }; treeViews.push(v); return v; },
  showInputBox: async (options: any) => { ui.inputBoxes.push(options); return ui.inputAnswers.shift(); },
  showQuickPick: async (items: any[], options: any) => { ui.quickPicks.push({ items, options }); return ui.pickAnswer(items); },
  showWarningMessage: async (message: string, options: any, ...buttons: string[]) => { ui.warnings.push({ message, options, buttons }); return ui.warningAnswer; },
  showInformationMessage: async (m: string, ..._rest: unknown[]) => { ui.infos.push(m); return undefined; },
  showErrorMessage: async (m: string, ..._rest: unknown[]) => { ui.errors.push(m); return undefined; },
  withProgress: async (options: any, task: (p: any, token: any) => Promise<any>) => {
    ui.progress.push({ options });
    return task({ report: (v: any) => ui.progress.push(v) }, { isCancellationRequested: false });
  },
  showTextDocument: async (doc: any, _o?: unknown) => { ui.shown.push(doc.uri.toString()); return {}; },
};

export const workspace = {
  workspaceFolders: undefined as { uri: Uri }[] | undefined,
  getConfiguration: (section: string) => ({
    get: <T>(key: string, dflt?: T): T => {
      const full = `${section}.${key}`;
      return (full in settings ? settings[full] : dflt) as T;
    },
  }),
  registerTextDocumentContentProvider: (scheme: string, p: any) => { providers[scheme] = p; return new Disposable(); },
  openTextDocument: async (uri: Uri) => { const text = await render(uri); return { uri, getText: () => text }; },
  onDidChangeConfiguration: (_l: unknown) => new Disposable(),
};

export const commands = {
  registerCommand: (id: string, fn: Fn) => {
    if (registered[id]) throw new Error(`command '${id}' already exists`);
    registered[id] = fn;
    return new Disposable(() => { delete registered[id]; });
  },
  executeCommand: async (command: string, ...args: unknown[]) => {
    executed.push({ command, args });
    if (command === "markdown.showPreview") { await render(args[0] as Uri); ui.shown.push(String(args[0])); return undefined; }
    const fn = registered[command];
    if (!fn) throw new Error(`command '${command}' not found`);
    return fn(...args);
  },
};
