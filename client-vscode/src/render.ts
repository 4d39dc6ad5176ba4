// Pure rendering: no `vscode` import, so every function here is unit-tested directly.
import type {
  DetailsItem, FileHistoryResult, JsonObject, ModelDownload, SearchHit, SearchResult, SessionInfo, StatusResult, TimelineEvent,
  TimelineResult,
} from "./types";

const REF = /^\[?(?:mem:)?([0-9A-Za-z]{6})\]?$/;
const IN_TEXT = /(?<![\w:])\[?mem:([0-9A-Za-z]{6})\b\]?/g;

/** `mem:AbC123`, `[mem:AbC123]` or `AbC123` -> `mem:AbC123`; anything else -> undefined. */
export function normalizeCitation(input: string | undefined): string | undefined {
  const m = REF.exec((input ?? "").trim());
  return m ? `mem:${m[1]}` : undefined;
}

/** The citation in `line` that covers column `character` (or touches it), if any. */
export function citationAt(line: string, character: number): string | undefined {
  for (const m of line.matchAll(IN_TEXT)) {
    const start = m.index ?? 0;
    if (character >= start && character <= start + m[0].length) return `mem:${m[1]}`;
  }
  return undefined;
}

/** `2026-11-22T05:57:11.844000Z` -> `2026-11-22 05:57`; unparsable input comes back unchanged. */
export function formatTime(ts: string | null | undefined, seconds = false): string {
  if (!ts) return "";
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts;
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, seconds ? 19 : 16)}`;
}

export function oneLine(text: string | null | undefined, max = 160): string {
  const s = (text ?? "").replace(/\s+/g, " ").trim();
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

export function shortId(id: string | null | undefined): string {
  return (id ?? "").slice(0, 8);
}

function baseName(path: string | null | undefined): string {
  if (!path) return "";
  const parts = path.replace(/[\\/]+$/, "").split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

// ---------------------------------------------------------------- search QuickPick

export interface SearchPickItem { label: string; description: string; detail: string; citation: string }

export function searchPickItem(hit: SearchHit): SearchPickItem {
  const summary = oneLine(hit.summary ?? hit.snippet ?? hit.text, 100);
  const description = [hit.type, formatTime(hit.timestamp), hit.confidence ? `${hit.confidence} confidence` : ""]
    .filter(Boolean).join(" · ");
  const snippet = oneLine(hit.snippet ?? hit.text, 200);
  const where = [hit.project ? baseName(hit.project) : "", hit.session_id ? `session ${shortId(hit.session_id)}` : "",
    typeof hit.score === "number" ? `score ${hit.score.toFixed(2)}` : ""].filter(Boolean).join(" · ");
  const detail = snippet && snippet !== summary ? `${snippet} — ${where}` : where;
  return { label: summary ? `${hit.citation}  ${summary}` : hit.citation, description, detail, citation: hit.citation };
}

export function searchPickItems(result: SearchResult): SearchPickItem[] {
  return result.results.filter(h => typeof h.citation === "string").map(searchPickItem);
}

// ---------------------------------------------------------------- markdown documents

/** A code fence longer than any backtick run inside `text`. */
export function fenced(text: string, lang = "text"): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), m => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

function cell(value: unknown): string {
  return String(value ?? "").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function eventLine(e: TimelineEvent): string {
  const mark = e.is_target ? "**▶** " : "";
  return `- ${mark}\`${e.citation}\` ${e.type ?? ""} · ${formatTime(e.timestamp, true)} — ${oneLine(e.preview, 200)}`;
}

export function renderDetails(d: DetailsItem): string {
  const rows: [string, unknown][] = [
    ["Type", d.tool_name ? `${d.type} (${d.tool_name})` : d.type],
    ["When", formatTime(d.timestamp, true) + (d.timestamp ? " UTC" : "")],
    ["Project", d.project ?? ""],
    ["Session", d.session_id ? `\`${d.session_id}\`` : ""],
  ];
  if (d.agent_id) rows.push(["Subagent", d.agent_id]);
  if (d.files && d.files.length) rows.push(["Files", d.files.map(f => `\`${f}\``).join(", ")]);
  const src = d.source;
  if (src?.path) {
    const lines = src.line_start ? `, lines ${src.line_start}${src.line_end && src.line_end !== src.line_start ? `–${src.line_end}` : ""}` : "";
    rows.push(["Source", `\`${src.path}\`${lines}`]);
  }
  if (typeof d.tokens === "number") rows.push(["Tokens", d.tokens]);
  const out = [`# ${d.citation}`, "", "| | |", "|---|---|", ...rows.map(([k, v]) => `| ${k} | ${cell(v)} |`), ""];
  out.push("## Content", "", fenced(d.content ?? d.text ?? ""), "");
  if (d.neighbours && d.neighbours.length) {
    out.push("## In its session", "", ...d.neighbours.map(eventLine), "");
  }
  return out.join("\n");
}

export function renderTimeline(t: TimelineResult, title: string): string {
  const out = [`# Timeline: ${title}`, ""];
  if (!t.windows.length) out.push("_Nothing found._", "");
  for (const w of t.windows) {
    out.push(`## Session \`${w.session_id ?? "?"}\`${w.project ? ` · ${w.project}` : ""}`, "", ...w.events.map(eventLine), "");
  }
  if (t.missing && t.missing.length) out.push(`Not found: ${t.missing.map(m => `\`${m}\``).join(", ")}`, "");
  return out.join("\n");
}

function flatten(obj: JsonObject, prefix = ""): [string, unknown][] {
  const rows: [string, unknown][] = [];
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object" && !Array.isArray(v)) rows.push(...flatten(v as JsonObject, key));
    else rows.push([key, Array.isArray(v) ? v.join(", ") : v]);
  }
  return rows;
}

export function renderStats(stats: JsonObject, status?: StatusResult): string {
  const out = ["# Claude Memory: stats", ""];
  const events = stats["events"];
  if (typeof events === "number") {
    out.push(`**${events} events** in ${stats["sessions"] ?? "?"} sessions across ${stats["projects"] ?? "?"} projects.`, "");
  }
  out.push("| | |", "|---|---|", ...flatten(stats).map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`), "");
  if (status) out.push("## Service", "", statusText(status).tooltip, "");
  return out.join("\n");
}

// ---------------------------------------------------------------- tree view

export interface TreeItemData { label: string; description: string; tooltip: string }

export function sessionItemData(s: SessionInfo): TreeItemData {
  const label = s.title ? oneLine(s.title, 80) : `${baseName(s.project) || "session"} · ${formatTime(s.first_ts)}`;
  const counts = [typeof s.events === "number" ? `${s.events} events` : "", typeof s.prompts === "number" ? `${s.prompts} prompts` : ""]
    .filter(Boolean).join(", ");
  const description = s.title ? [formatTime(s.first_ts), counts].filter(Boolean).join(" · ") : counts;
  const tooltip = [`Session ${s.session_id}`, s.project ? `Project: ${s.project}` : "", s.git_branch ? `Branch: ${s.git_branch}` : "",
    s.first_ts ? `From ${formatTime(s.first_ts, true)} to ${formatTime(s.last_ts, true)} UTC` : ""].filter(Boolean).join("\n");
  return { label, description, tooltip };
}

export function eventItemData(e: TimelineEvent): TreeItemData {
  return {
    label: oneLine(e.preview, 80) || e.citation,
    description: [e.type, formatTime(e.timestamp, true), e.citation].filter(Boolean).join(" · "),
    tooltip: `${e.citation} · ${e.type ?? ""}\n${oneLine(e.preview, 500)}`,
  };
}

/** The events of a timeline answer, in order, each once. */
export function timelineEvents(t: TimelineResult): TimelineEvent[] {
  const seen = new Set<string>();
  const out: TimelineEvent[] = [];
  for (const w of t.windows) for (const e of w.events) if (!seen.has(e.citation)) { seen.add(e.citation); out.push(e); }
  return out;
}

// ---------------------------------------------------------------- status bar, messages

export interface StatusView { text: string; tooltip: string; ok: boolean }

export function statusText(s: StatusResult | undefined, error?: string): StatusView {
  if (error || !s) return { text: "$(error) Memory: off", tooltip: `Claude Memory service not available${error ? `: ${error}` : ""}`, ok: false };
  if (s.running === false || s.error) {
    return { text: "$(error) Memory: off", tooltip: `Claude Memory service not running${s.error ? `: ${s.error}` : ""}`, ok: false };
  }
  const events = s.store?.events;
  const emb = s.embedding ?? undefined;
  const pending = emb?.pending ?? 0;
  let text = "$(database) Memory";
  if (typeof events === "number") text += `: ${events}`;
  const download = emb?.download ?? undefined;
  const downloading = emb?.available === false && download?.state === "downloading";
  if (downloading) text += ` $(cloud-download) model ${downloadShare(download)}`;
  else if (emb && emb.available === false) text += " $(warning) keyword only";
  else if (pending > 0) text += ` $(sync~spin) ${pending} to embed`;
  const lines = [
    `Claude Memory service running${s.service?.pid ? ` (pid ${s.service.pid})` : ""}${s.service?.version ? `, version ${s.service.version}` : ""}`,
    s.service?.data_dir ? `Data: ${s.service.data_dir}` : "",
    typeof events === "number" ? `Events: ${events}` : "",
    emb ? `Embeddings: ${emb.available === false ? `unavailable — ${emb.reason ?? "no model"}` : `${emb.vectors ?? 0} vectors, ${pending} pending`}` : "",
    downloading ? `Downloading the embedding model: ${downloadShare(download)}; keyword search meanwhile` : "",
    emb?.available === false && download?.state === "failed" ? `Model download failed: ${download.error ?? "unknown"}` : "",
    scopeLine(s),
    ...(s.warnings ?? []).map(w => `Warning: ${w}`),
  ].filter(Boolean);
  return { text, tooltip: lines.join("\n"), ok: true };
}

function downloadShare(d: ModelDownload | undefined): string {
  const done = d?.bytes ?? 0, total = d?.total ?? 0;
  return total > 0 ? `${Math.min(99, Math.floor((100 * done) / total))}%` : `${Math.round(done / 1e6)} MB`;
}

function scopeLine(s: StatusResult): string {
  const ls = s.language_server;
  if (!ls) return "";
  if (ls.settings?.allProjects) return "Scope: every project";
  const projects = (ls.workspace ?? []).map(w => w.project).filter(Boolean);
  return projects.length ? `Scope: ${projects.join(", ")}` : "";
}

export function forgetPrompt(citation: string, d?: DetailsItem): string {
  const what = d ? ` (${d.type ?? "event"}, ${formatTime(d.timestamp)}): "${oneLine(d.content ?? d.text, 120)}"` : "";
  return `Forget ${citation}${what}? It is removed from the store and the search index for good.`;
}

export function importSummary(report: JsonObject): string {
  const files = report["files"] as { read?: number; found?: number } | undefined;
  const events = report["events"] as { new?: number } | undefined;
  if (!files && !events) return "Claude Code history imported.";
  const n = events?.new ?? 0;
  return `Imported ${n} new event${n === 1 ? "" : "s"}; ${files?.read ?? 0} of ${files?.found ?? 0} transcripts had new lines.`;
}

export function renderFileHistory(h: FileHistoryResult, path: string, symbol?: string): string {
  const sym = h.symbol ?? symbol;
  const out = [`# History of \`${h.path ?? path}\`${sym ? ` · \`${sym}\`` : ""}`, ""];
  if (typeof h.file_events === "number") out.push(`${h.file_events} events touched this file${h.events.length < h.file_events ? `; the newest ${h.events.length}:` : "."}`, "");
  if (!h.events.length) out.push("_No past session touched this file._", "");
  for (const e of h.events) {
    out.push(`- \`${e.citation}\` ${e.type ?? ""} · ${formatTime(e.timestamp, true)} — ${oneLine(e.text, 200)}`);
  }
  out.push("");
  return out.join("\n");
}
