import * as vscode from "vscode";
import { MemoryApi } from "./api";
import { AnnotationSettings, readAnnotationSettings, SECTION } from "./config";
import { annotationHover, annotationText, claudeLines, LINKED_COMMANDS } from "./render";
import type { BlameResult } from "./types";

export interface AnnotationOptions {
  /** Cursor moves within this many ms make one update. */
  debounceMs: number;
  /** A blame of an unchanged document version is asked again after this many ms (new edit records show). */
  refreshMs: number;
}

interface CacheEntry { version: number; at: number; blame: BlameResult | undefined; pending: Promise<BlameResult | undefined> | undefined }

const MAX_CACHED = 64;

/** A color the extension contributes (package.json `contributes.colors`: `claudeMemory.<name>`). */
const color = (name: string) => new vscode.ThemeColor(`${SECTION}.${name}`);

/**
 * Line provenance in the editor (like GitLens's current-line blame): after the cursor's line, dimmed, which
 * conversation wrote it when Claude did; and, with `claudeMemory.annotations.gutter`, a bar beside (and an
 * overview ruler mark for) every line Claude wrote in the visible editors, dotted where the lines changed since.
 * One `claudeMemory.blame` per document version (asked again after `refreshMs` on an unchanged version).
 */
export class LineAnnotations implements vscode.Disposable {
  readonly types = {
    currentLine: vscode.window.createTextEditorDecorationType({
      after: { color: color("lineAnnotationForeground"), margin: "0 0 0 3em", fontStyle: "italic" },
      rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen,
    }),
    gutter: vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      borderWidth: "0 0 0 2px",
      borderStyle: "solid",
      borderColor: color("gutterForeground"),
      overviewRulerColor: color("gutterForeground"),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    }),
    gutterFuzzy: vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      borderWidth: "0 0 0 2px",
      borderStyle: "dotted",
      borderColor: color("gutterChangedForeground"),
      overviewRulerColor: color("gutterChangedForeground"),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    }),
  };
  private readonly cache = new Map<string, CacheEntry>();
  private readonly options: AnnotationOptions;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The editor showing the current-line annotation, and on which line (0-based). */
  private shown: { editor: vscode.TextEditor; line: number } | undefined;
  /** Editors showing gutter marks. */
  private readonly guttered = new Set<vscode.TextEditor>();
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly api: () => MemoryApi,
    private readonly settings: () => AnnotationSettings = readAnnotationSettings,
    options: Partial<AnnotationOptions> = {},
    private readonly log: (message: string) => void = () => undefined,
  ) {
    this.options = { debounceMs: 150, refreshMs: 5000, ...options };
  }

  /** Listen to the editors; returns the listeners (the caller disposes them). */
  register(): vscode.Disposable[] {
    return [
      vscode.window.onDidChangeTextEditorSelection(e => {
        // leaving the annotated line hides its annotation at once; the new line's shows after the debounce
        if (this.shown && (this.shown.editor !== e.textEditor || this.shown.line !== e.textEditor.selection.active.line)) this.clearLine();
        this.schedule();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.clearLine();
        this.schedule();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.schedule()),
      vscode.workspace.onDidChangeTextDocument(e => {
        if (this.shown?.editor.document === e.document) this.clearLine();
        if (e.contentChanges.length) this.schedule();
      }),
      vscode.workspace.onDidCloseTextDocument(d => void this.cache.delete(d.uri.toString())),
    ];
  }

  /** An update after the debounce (cursor moves, typing, switching editors). */
  schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update();
    }, this.options.debounceMs);
  }

  /** Show what the settings ask for, now; updates run one at a time. */
  update(): Promise<void> {
    this.running = this.running.then(() => this.doUpdate()).catch(e => this.log(`line annotations: ${e instanceof Error ? e.message : String(e)}`));
    return this.running;
  }

  private async doUpdate(): Promise<void> {
    const s = this.settings();
    await Promise.all([this.updateCurrentLine(s.currentLine), this.updateGutter(s.gutter)]);
  }

  private async updateCurrentLine(on: boolean): Promise<void> {
    const ed = vscode.window.activeTextEditor;
    if (!on || !ed || ed.document.uri.scheme !== "file") {
      this.clearLine();
      return;
    }
    const version = ed.document.version;
    const line = ed.selection.active.line;
    const blame = await this.blameOf(ed.document);
    // moved on meanwhile: the update scheduled by that move shows the right line
    if (vscode.window.activeTextEditor !== ed || ed.document.version !== version || ed.selection.active.line !== line) return;
    const text = blame && annotationText(blame, line + 1);
    if (!blame || !text) {
      this.clearLine();
      return;
    }
    if (this.shown && this.shown.editor !== ed) this.clearLine();
    const end = ed.document.lineAt(line).text.length;
    const hover = new vscode.MarkdownString(annotationHover(blame, line + 1) ?? "");
    hover.isTrusted = { enabledCommands: Object.values(LINKED_COMMANDS) };
    ed.setDecorations(this.types.currentLine, [{
      range: new vscode.Range(line, end, line, end),
      hoverMessage: hover,
      renderOptions: { after: { contentText: text } },
    }]);
    this.shown = { editor: ed, line };
  }

  private clearLine(): void {
    this.shown?.editor.setDecorations(this.types.currentLine, []);
    this.shown = undefined;
  }

  private async updateGutter(on: boolean): Promise<void> {
    const editors = on ? vscode.window.visibleTextEditors.filter(e => e.document.uri.scheme === "file") : [];
    for (const ed of [...this.guttered]) {
      if (!editors.includes(ed)) {
        ed.setDecorations(this.types.gutter, []);
        ed.setDecorations(this.types.gutterFuzzy, []);
        this.guttered.delete(ed);
      }
    }
    await Promise.all(editors.map(async ed => {
      const version = ed.document.version;
      const blame = await this.blameOf(ed.document);
      if (ed.document.version !== version) return; // typed meanwhile: the next update marks the new text
      const spans = blame ? claudeLines(blame) : [];
      const ranges = (fuzzy: boolean) => spans.filter(s => s.fuzzy === fuzzy).map(s => new vscode.Range(s.start - 1, 0, s.end - 1, 0));
      ed.setDecorations(this.types.gutter, ranges(false));
      ed.setDecorations(this.types.gutterFuzzy, ranges(true));
      this.guttered.add(ed);
    }));
  }

  /** The document's blame: once per version, again after `refreshMs`; undefined when the server cannot tell. */
  blameOf(doc: vscode.TextDocument): Promise<BlameResult | undefined> {
    const key = doc.uri.toString();
    const old = this.cache.get(key);
    if (old && old.version === doc.version) {
      if (old.pending) return old.pending;
      if (Date.now() - old.at < this.options.refreshMs) return Promise.resolve(old.blame);
    }
    const previous = old && old.version === doc.version ? old.blame : undefined;
    const entry: CacheEntry = { version: doc.version, at: Date.now(), blame: previous, pending: undefined };
    entry.pending = this.api().blame({ uri: key }).then(b => b, e => {
      this.log(`blame of ${key}: ${e instanceof Error ? e.message : String(e)}`);
      return previous;
    }).then(b => {
      entry.blame = b;
      entry.at = Date.now();
      entry.pending = undefined;
      return b;
    });
    this.cache.delete(key);
    this.cache.set(key, entry);
    if (this.cache.size > MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    return entry.pending;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.cache.clear();
    for (const t of Object.values(this.types)) t.dispose();
  }
}
