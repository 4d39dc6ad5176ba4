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
  toString(): string { return `${this.scheme}:${this.scheme === "file" ? "//" : ""}${this.path}${this.query ? "?" + this.query : ""}`; }
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

export enum DecorationRangeBehavior { OpenOpen = 0, ClosedClosed = 1, OpenClosed = 2, ClosedOpen = 3 }
export enum OverviewRulerLane { Left = 1, Center = 2, Right = 4, Full = 7 }
export enum ConfigurationTarget { Global = 1, Workspace = 2, WorkspaceFolder = 3 }

export class Position { constructor(public line: number, public character: number) {} }
export class Range {
  start: Position; end: Position;
  constructor(l1: number, c1: number, l2: number, c2: number) { this.start = new Position(l1, c1); this.end = new Position(l2, c2); }
}
export class Selection {
  constructor(public anchor: Position, public active: Position) {}
  get isEmpty() { return this.anchor.line === this.active.line && this.anchor.character === this.active.character; }
  private get reversed() { return this.active.line < this.anchor.line || (this.active.line === this.anchor.line && this.active.character < this.anchor.character); }
  get start() { return this.reversed ? this.active : this.anchor; }
  get end() { return this.reversed ? this.anchor : this.active; }
}
export class MarkdownString {
  isTrusted?: boolean | { enabledCommands: readonly string[] };
  constructor(public value = "") {}
}

/** Created decoration types, in order: `{key, options}`. */
export const decorationTypes: { key: string; options: any; disposed: boolean; dispose(): void }[] = [];

/** A text editor over `text`, cursor at (line, character), optional selection end. Records `setDecorations`. */
export function editor(text: string, uri: Uri, line: number, character: number, endCharacter?: number) {
  const lines = text.split("\n");
  const sel = new Selection(new Position(line, character), new Position(line, endCharacter ?? character));
  const decorations = new Map<string, any[]>();
  return {
    selection: sel,
    decorations, // decoration type key -> the last decorations set
    setDecorations: (type: { key: string }, ranges: any[]) => { decorations.set(type.key, ranges); },
    document: {
      uri,
      version: 1,
      lineCount: lines.length,
      lineAt: (l: number) => ({ text: lines[l] ?? "" }),
      getText: (r?: Selection) => (r ? lines[r.anchor.line].slice(r.anchor.character, r.active.character) : text),
      getWordRangeAtPosition: () => undefined,
    },
  };
}

export const events = {
  selection: new EventEmitter<{ textEditor: any; selections: Selection[] }>(),
  activeEditor: new EventEmitter<any>(),
  visibleEditors: new EventEmitter<any[]>(),
  documentChange: new EventEmitter<{ document: any; contentChanges: unknown[] }>(),
  documentClose: new EventEmitter<any>(),
  configuration: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
};

async function render(uri: Uri): Promise<string> {
  const p = providers[uri.scheme];
  const text = p ? await p.provideTextDocumentContent(uri) : "";
  ui.rendered.set(uri.toString(), text);
  return text;
}

export const window = {
  activeTextEditor: undefined as any,
  visibleTextEditors: [] as any[],
  createTextEditorDecorationType: (options: any) => {
    const t = { key: `decoration-${decorationTypes.length}`, options, disposed: false, dispose() { t.disposed = true; } };
    decorationTypes.push(t);
    return t;
  },
  onDidChangeTextEditorSelection: events.selection.event,
  onDidChangeActiveTextEditor: events.activeEditor.event,
  onDidChangeVisibleTextEditors: events.visibleEditors.event,
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
    inspect: (key: string) => ({ key: `${section}.${key}`, globalValue: settings[`${section}.${key}`] }),
    /** Sets the value (any target) and fires onDidChangeConfiguration, as VS Code does. */
    update: async (key: string, value: unknown, _target?: ConfigurationTarget) => {
      const full = `${section}.${key}`;
      if (value === undefined) delete settings[full]; else settings[full] = value;
      events.configuration.fire({ affectsConfiguration: (s: string) => full === s || full.startsWith(s + ".") });
    },
  }),
  registerTextDocumentContentProvider: (scheme: string, p: any) => { providers[scheme] = p; return new Disposable(); },
  openTextDocument: async (uri: Uri) => { const text = await render(uri); return { uri, getText: () => text }; },
  onDidChangeConfiguration: events.configuration.event,
  onDidChangeTextDocument: events.documentChange.event,
  onDidCloseTextDocument: events.documentClose.event,
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
