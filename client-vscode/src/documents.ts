import * as vscode from "vscode";
import { MemoryApi } from "./api";
import { readSettings } from "./config";
import { normalizeCitation, renderDetails, renderStats, renderTimeline } from "./render";

export const SCHEME = "claude-memory";

/** URIs of the read-only virtual documents (`claude-memory:/details/AbC123.md`, ...). */
export const docUri = {
  details: (citation: string) => vscode.Uri.parse(`${SCHEME}:/details/${citation.replace(/^mem:/, "")}.md`),
  timeline: (citation: string, before: number, after: number) =>
    vscode.Uri.parse(`${SCHEME}:/timeline/${citation.replace(/^mem:/, "")}.md?before=${before}&after=${after}`),
  stats: () => vscode.Uri.parse(`${SCHEME}:/stats.md`),
  result: (name: string) => vscode.Uri.parse(`${SCHEME}:/result/${encodeURIComponent(name)}.md`),
};

/**
 * Markdown documents fetched from the language server on demand, so that "Reload" shows fresh data.
 * `result/*` documents hold content handed over by the extension (a command result already in hand).
 */
export class MemoryDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly results = new Map<string, string>();

  constructor(private readonly api: () => MemoryApi) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    try {
      return await this.render(uri);
    } catch (e) {
      return `# Claude Memory\n\nCould not load \`${uri.path}\`: ${e instanceof Error ? e.message : String(e)}\n`;
    }
  }

  async render(uri: vscode.Uri): Promise<string> {
    const [, kind, rest = ""] = uri.path.split("/");
    const name = decodeURIComponent(rest.replace(/\.md$/, ""));
    if (kind === "details") {
      const citation = normalizeCitation(name) ?? name;
      const d = await this.api().show({ ref: citation });
      return d ? renderDetails(d) : `# ${citation}\n\nNo such memory (it may have been forgotten).\n`;
    }
    if (kind === "timeline") {
      const q = new URLSearchParams(uri.query);
      const citation = normalizeCitation(name) ?? name;
      const t = await this.api().timeline({ refs: [citation], before: Number(q.get("before") ?? 3), after: Number(q.get("after") ?? 3) });
      return renderTimeline(t, citation);
    }
    if (kind === "stats.md") {
      const [stats, status] = await Promise.all([this.api().stats(), this.api().status().catch(() => undefined)]);
      return renderStats(stats, status);
    }
    if (kind === "result") return this.results.get(uri.toString()) ?? "_This result is no longer available._\n";
    return `# Claude Memory\n\nUnknown document \`${uri.path}\`.\n`;
  }

  /** Keep `markdown` as the content of a `result/<name>` document and return its URI. */
  setResult(name: string, markdown: string): vscode.Uri {
    const uri = docUri.result(name);
    this.results.set(uri.toString(), markdown);
    return uri;
  }

  /** Show a document (fresh content), as a rendered markdown preview or as its read-only source. */
  async open(uri: vscode.Uri): Promise<void> {
    this.changed.fire(uri);
    if (readSettings().openAs === "preview") {
      try {
        await vscode.commands.executeCommand("markdown.showPreview", uri);
        return;
      } catch {
        // no markdown extension: fall through to the source
      }
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
