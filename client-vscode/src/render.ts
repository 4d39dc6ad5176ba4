// Pure rendering: no `vscode` import, so every function here is unit-tested directly.
import type {
  BlameRange, BlameResult, DetailsItem, EditRecord, FileHistoryResult, InsightEvidence, JsonObject, ModelDownload, PreferenceInfo, SearchHit,
  SearchResult, SessionInfo, StatusResult,
  TaskDetail, TaskHistoryStep, TaskInfo, TaskRef, TaskStatus, TimelineEvent, TimelineResult, WhyResult,
} from "./types";

/** Extension commands that rendered markdown links to (ids as in package.json; commands.ts uses these). */
export const LINKED_COMMANDS = { openCitation: "claudeMemory.openCitation", why: "claudeMemory.whyThisCode" } as const;

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

// ---------------------------------------------------------------- citation links

/**
 * How a citation links to its memory. `document` (memory documents): a relative link to the `details/` document,
 * which the markdown preview opens in place (every memory document lives one folder deep:
 * `claude-memory:/details/…`, `/timeline/…`, `/result/…`). The built-in markdown preview never runs `command:`
 * links (microsoft/vscode#215939), so documents do not use them. `command` (hovers, a `MarkdownString` trusted
 * for {@link LINKED_COMMANDS} only): runs Open Citation.
 */
export type LinkStyle = "document" | "command";

export function commandUri(command: string, args?: unknown[]): string {
  return `command:${command}${args ? `?${encodeURIComponent(JSON.stringify(args))}` : ""}`;
}

/** `[mem:AbC123](…)`: the one way rendered markdown links a citation. */
export function citationLink(citation: string, style: LinkStyle = "document"): string {
  const id = citation.replace(/^mem:/, "");
  const target = style === "command" ? commandUri(LINKED_COMMANDS.openCitation, [`mem:${id}`]) : `../details/${id}.md`;
  return `[mem:${id}](${target})`;
}

const CITE_IN_MARKDOWN = /(\[)?(?<![\w:/.-])mem:([0-9A-Za-z]{6})(?![0-9A-Za-z])(\]\(|\])?/g;

/** Citations in markdown text (`[mem:AbC123]` or bare `mem:AbC123`) made links; code spans, code fences and
 * citations that already are link texts are left alone. */
export function linkCitations(markdown: string, style: LinkStyle = "document"): string {
  let fence: string | undefined;
  return markdown.split("\n").map(line => {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length && !line.slice(f[0].length).trim()) fence = undefined;
      return line;
    }
    if (f) {
      fence = f[1];
      return line;
    }
    return outsideCodeSpans(line, text => text.replace(CITE_IN_MARKDOWN, (m: string, open?: string, id?: string, close?: string) => {
      if (close === "](") return m; // already the text of a link
      const link = citationLink(`mem:${id}`, style);
      return open && close ? link : `${open ?? ""}${link}${close ?? ""}`;
    }));
  }).join("\n");
}

/** `fn` applied to the parts of one line of markdown that are not inside a code span. */
function outsideCodeSpans(line: string, fn: (text: string) => string): string {
  let out = "";
  let at = 0;
  const runs = /`+/g;
  for (let m = runs.exec(line); m; m = runs.exec(line)) {
    const closing = new RegExp(`(?<!\`)${m[0]}(?!\`)`, "g");
    closing.lastIndex = m.index + m[0].length;
    const end = closing.exec(line);
    if (!end) break; // an unmatched run is literal text
    out += fn(line.slice(at, m.index)) + line.slice(m.index, end.index + end[0].length);
    at = end.index + end[0].length;
    runs.lastIndex = at;
  }
  return out + fn(line.slice(at));
}

// ---------------------------------------------------------------- markdown documents

/** A code fence longer than any backtick run inside `text`. */
export function fenced(text: string, lang = "text"): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), m => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

/** `text` as an inline code span, whatever backticks it holds. */
export function code(text: string): string {
  const s = text.replace(/\r\n|\r|\n/g, " ");
  const longest = Math.max(0, ...Array.from(s.matchAll(/`+/g), m => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = longest > 0 || s.startsWith(" ") || s.endsWith(" ") ? " " : "";
  return `${ticks}${pad}${s}${pad}${ticks}`;
}

/** Plain text that markdown shows as written (on one line). */
export function escapeMarkdown(text: string): string {
  return text.replace(/\r\n|\r|\n/g, " ").replace(/([\\`*_{}[\]<>()#+!|~])/g, "\\$1");
}

/** One table cell: on one line, pipes escaped (also inside code spans, which GFM tables split before). */
function cell(value: unknown): string {
  return String(value ?? "").replace(/\r\n|\r|\n/g, " ").replace(/\|/g, "\\|").trim();
}

/** A two-column table of the rows whose value is not empty; no such row, no table at all (a table without
 * rows, or with an empty header, renders as a stray bar in the preview). */
export function keyValueTable(rows: [string, unknown][], head: [string, string]): string[] {
  const kept = rows.filter(([, v]) => cell(v) !== "");
  if (!kept.length) return [];
  return [`| ${cell(head[0])} | ${cell(head[1])} |`, "|---|---|", ...kept.map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`), ""];
}

function eventLine(e: TimelineEvent): string {
  const mark = e.is_target ? "**▶** " : "";
  return `- ${mark}${citationLink(e.citation)} ${e.type ?? ""} · ${formatTime(e.timestamp, true)} — ${escapeMarkdown(oneLine(e.preview, 200))}`;
}

export function renderDetails(d: DetailsItem): string {
  const rows: [string, unknown][] = [
    ["Type", d.tool_name ? `${d.type ?? "tool_use"} (${d.tool_name})` : d.type],
    ["When", d.timestamp ? `${formatTime(d.timestamp, true)} UTC` : ""],
    ["Project", d.project ?? ""],
    ["Session", d.session_id ? code(d.session_id) : ""],
  ];
  if (d.agent_id) rows.push(["Subagent", d.agent_id]);
  if (d.files && d.files.length) rows.push(["Files", d.files.map(code).join(", ")]);
  const src = d.source;
  if (src?.path) {
    const lines = src.line_start ? `, lines ${src.line_start}${src.line_end && src.line_end !== src.line_start ? `–${src.line_end}` : ""}` : "";
    rows.push(["Source", `${code(src.path)}${lines}`]);
  }
  if (typeof d.tokens === "number") rows.push(["Tokens", d.tokens]);
  if (typeof d.citation_uses === "number" && d.citation_uses > 0) {
    const last = d.last_used ? `, last ${formatTime(d.last_used, true)} UTC` : "";
    rows.push(["Used", `${d.citation_uses} time${d.citation_uses === 1 ? "" : "s"} in ${d.sessions_used ?? 0} session${d.sessions_used === 1 ? "" : "s"}${last}`]);
    rows.push(["Level", `L${d.level ?? 0}`]);
  }
  const out = [`# ${d.citation}`, "", ...keyValueTable(rows, ["Field", "Value"])];
  const content = d.content ?? d.text ?? "";
  out.push("## Content", "", content ? fenced(content) : "_No text._", "");
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
  if (t.missing && t.missing.length) out.push(`Not found: ${t.missing.map(m => code(m)).join(", ")}`, "");
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
  out.push(...keyValueTable(flatten(stats), ["Statistic", "Value"]));
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
  const endless = s.endless?.mode === "endless" ? s.endless : undefined;
  if (endless) text += " ∞";
  const lines = [
    `Claude Memory service running${s.service?.pid ? ` (pid ${s.service.pid})` : ""}${s.service?.version ? `, version ${s.service.version}` : ""}`,
    s.service?.data_dir ? `Data: ${s.service.data_dir}` : "",
    typeof events === "number" ? `Events: ${events}` : "",
    emb ? `Embeddings: ${emb.available === false ? `unavailable — ${emb.reason ?? "no model"}` : `${emb.vectors ?? 0} vectors, ${pending} pending`}` : "",
    downloading ? `Downloading the embedding model: ${downloadShare(download)}; keyword search meanwhile` : "",
    emb?.available === false && download?.state === "failed" ? `Model download failed: ${download.error ?? "unknown"}` : "",
    endless
      ? `Endless mode: working set ${endless.working_set ?? 0} events, continuity ${(endless.continuity ?? 0.5).toFixed(2)}` +
        `${endless.transition ? ` (${endless.transition})` : ""}, ${endless.consolidated ?? 0} consolidated`
      : "",
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
    out.push(`- ${citationLink(e.citation)} ${e.type ?? ""} · ${formatTime(e.timestamp, true)} — ${escapeMarkdown(oneLine(e.text, 200))}`);
  }
  out.push("");
  return out.join("\n");
}

// ---------------------------------------------------------------- line provenance (blame, why)

/** Lines Claude wrote, 1-based and inclusive; `fuzzy`: changed since Claude wrote them. */
export interface ClaudeSpan { start: number; end: number; fuzzy: boolean }

export function claudeLines(blame: BlameResult): ClaudeSpan[] {
  return blame.ranges
    .filter(r => r.edit !== null && r.edit !== undefined)
    .map(r => ({ start: r.start, end: r.end, fuzzy: r.method === "fuzzy" }));
}

/** The range covering `line` (1-based) when Claude wrote it, with its edit record. The edit is matched by the id
 * as parsed from the same answer (ids are 63-bit: never compare them with ids parsed from another message). */
export function blameAt(blame: BlameResult, line: number): { range: BlameRange; edit: EditRecord | undefined } | undefined {
  const range = blame.ranges.find(r => r.start <= line && line <= r.end);
  if (!range || range.edit === null || range.edit === undefined) return undefined;
  return { range, edit: blame.edits.find(e => e.id === range.edit) };
}

function span(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}-${end}`;
}

/** How a range was matched, in words (as the server's hovers say it). */
export function matchWords(r: BlameRange): string {
  if (r.method === "fuzzy") {
    return typeof r.confidence === "number" ? `fuzzy match, ${Math.round(r.confidence * 100)}%: changed since` : "fuzzy match: changed since";
  }
  return r.method === "normalized" ? "same but for whitespace" : "exact";
}

/** The end-of-line annotation for `line` (1-based) when Claude wrote it, e.g.
 * `Claude · 2026-03-11 · “Add an apply_discount method to the cart” (mem:j9ULpU)`; undefined otherwise. */
export function annotationText(blame: BlameResult, line: number, max = 80): string | undefined {
  const at = blameAt(blame, line);
  if (!at) return undefined;
  const { range, edit } = at;
  const parts = [range.method === "fuzzy" ? "Claude (changed since)" : "Claude"];
  const day = (edit?.timestamp ?? "").slice(0, 10);
  if (day) parts.push(day);
  const prompt = oneLine(edit?.prompt?.text, max);
  let what = prompt ? `“${prompt}”` : edit?.tool ?? "";
  if (edit?.citation) what += `${what ? " " : ""}(${edit.citation})`;
  if (what) parts.push(what);
  return parts.join(" · ");
}

/** The annotation's hover: which conversation wrote the lines and why, citations as command links (the hover's
 * MarkdownString is trusted for {@link LINKED_COMMANDS} only). */
export function annotationHover(blame: BlameResult, line: number): string | undefined {
  const at = blameAt(blame, line);
  if (!at) return undefined;
  const { range, edit } = at;
  const cite = (c: string | null | undefined) => (c ? ` ${citationLink(c, "command")}` : "");
  const out = [`**Claude wrote ${span(range.start, range.end)}** (${escapeMarkdown(matchWords(range))})`];
  if (edit) {
    const who = [edit.session_id ? `session ${code(shortId(edit.session_id))}` : "", edit.model ? escapeMarkdown(edit.model) : "",
      edit.agent_id ? `subagent ${code(shortId(edit.agent_id))}` : ""].filter(Boolean).join(" · ");
    out.push(`${escapeMarkdown(edit.tool ?? "Edit")}${cite(edit.citation)} on ${formatTime(edit.timestamp) || "an unknown day"}${who ? ` · ${who}` : ""}`);
    if (edit.prompt?.text) out.push(`Asked: “${escapeMarkdown(oneLine(edit.prompt.text, 300))}”${cite(edit.prompt.citation)}`);
    if (edit.answer?.text) out.push(`Claude: “${escapeMarkdown(oneLine(edit.answer.text, 300))}”${cite(edit.answer.citation)}`);
  }
  out.push(`[Why is this code like this?](${commandUri(LINKED_COMMANDS.why)})`);
  return out.join("\n\n");
}

/** The "Why is this code like this?" document: the server's markdown with its citations linked. */
export function renderWhy(r: WhyResult, name: string, start: number, end: number): string {
  const md = r.markdown.trim() ? r.markdown : `### ${name}, ${span(start, end)}\n\nNothing is remembered about these lines.\n`;
  return `${linkCitations(md).replace(/\n*$/, "")}\n`;
}

/** Whether a why answer tells of any line Claude wrote. */
export function whyKnown(r: WhyResult): boolean {
  return r.ranges.some(x => x.edit !== null && x.edit !== undefined);
}

/** The message when nothing is known about the lines: the server's own sentence when it gave one. */
export function whyNothingMessage(r: WhyResult, name: string, start: number, end: number): string {
  const said = oneLine(r.markdown.replace(/^#{1,6} .*$/m, ""), 300);
  return `Claude Memory: ${span(start, end)} of ${name}: ${said || "nothing is remembered about these lines."}`;
}

// ---------------------------------------------------------------- tasks (view and document)

/** The statuses in the order the Tasks view groups them: open ones first. */
export const TASK_STATUSES: readonly TaskStatus[] = ["in_progress", "blocked", "pending", "done", "cancelled"];
const OPEN_TASK_STATUSES: readonly string[] = ["in_progress", "blocked", "pending"];

const STATUS_LABELS: Record<string, string> = {
  in_progress: "In progress", blocked: "Blocked", pending: "Pending", done: "Done", cancelled: "Cancelled",
};

/** `in_progress` -> `In progress`; a status this client does not know is shown as sent, underscores as spaces. */
export function taskStatusLabel(status: string | null | undefined): string {
  const s = status ?? "";
  return STATUS_LABELS[s] ?? s.replace(/_/g, " ");
}

function statusWord(status: string | null | undefined): string {
  return taskStatusLabel(status).toLowerCase();
}

export function isOpenTask(status: string | null | undefined): boolean {
  return OPEN_TASK_STATUSES.includes(status ?? "");
}

export interface TaskGroup { status: string; label: string; open: boolean; tasks: TaskInfo[] }

/** Tasks by status, groups in {@link TASK_STATUSES} order (a status this client does not know last), empty ones
 * left out; within a group the server's order (the most recently changed first). */
export function taskGroups(tasks: TaskInfo[]): TaskGroup[] {
  const by = new Map<string, TaskInfo[]>();
  for (const t of tasks) by.set(t.status, [...(by.get(t.status) ?? []), t]);
  const order = [...TASK_STATUSES, ...[...by.keys()].filter(s => !(TASK_STATUSES as readonly string[]).includes(s))];
  return order.filter(s => by.has(s)).map(s => ({ status: s, label: taskStatusLabel(s), open: isOpenTask(s), tasks: by.get(s) ?? [] }));
}

function day(ts: string | null | undefined): string {
  return formatTime(ts).slice(0, 10);
}

function refWords(b: TaskRef): string {
  return `${oneLine(b.title || b.id, 120)}${b.placeholder ? " (placeholder)" : ""}`;
}

/** A task in the Tasks view: its title; the day it last changed and the citation of that change. */
export function taskItemData(t: TaskInfo): TreeItemData {
  const description = [day(t.last_ts ?? t.first_ts), t.citation ?? ""].filter(Boolean).join(" · ");
  const when = t.first_ts
    ? `First seen ${formatTime(t.first_ts, true)}${t.last_ts ? `, last changed ${formatTime(t.last_ts, true)}` : ""} UTC${t.citation ? ` (${t.citation})` : ""}`
    : "";
  const tooltip = [
    oneLine(t.title, 500),
    [taskStatusLabel(t.status), t.project ?? ""].filter(Boolean).join(" · "),
    ...t.blockers.map(b => `Blocked by: ${refWords(b)}`),
    ...t.blocker_suggestions.map(b => `Maybe blocked by: ${refWords(b)}`),
    when,
    t.id,
  ].filter(Boolean).join("\n");
  return { label: oneLine(t.title, 100) || t.id, description, tooltip };
}

/** A blocker of a task (`suggested`: read from the task's words, not set by a tool call). */
export function blockerItemData(b: TaskRef, suggested: boolean): TreeItemData {
  const description = [suggested ? "suggested" : "", b.type ?? "", b.placeholder ? "placeholder" : "", b.status ? statusWord(b.status) : ""]
    .filter(Boolean).join(" · ");
  const candidates = b.candidates?.length ? `${b.candidates.length} candidate${b.candidates.length === 1 ? "" : "s"}` : "";
  const tooltip = [`${suggested ? "Maybe blocked by" : "Blocked by"}${b.type ? ` (${b.type})` : ""}: ${oneLine(b.title || b.id, 500)}`,
    b.placeholder ? "A placeholder: the task was blocked without saying by what." : "", candidates, b.id].filter(Boolean).join("\n");
  return { label: oneLine(b.title, 100) || b.id, description, tooltip };
}

/** The `result/` document name of a task: its id, as one path segment (citation links resolve from it). */
export function taskDocName(id: string): string {
  const slug = id.replace(/^task:/, "").replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^-+|-+$/g, "");
  return `task-${slug.length > 100 ? slug.slice(-100) : slug || "unnamed"}`;
}

function refLine(b: TaskRef, suggested: boolean): string {
  const what = [b.type ?? "", b.placeholder ? "placeholder" : "", b.status ? statusWord(b.status) : ""].filter(Boolean).join(", ");
  return `- ${suggested ? "_Suggested:_ " : ""}${escapeMarkdown(oneLine(b.title || b.id, 300))}${what ? ` (${what})` : ""} · ${code(b.id)}`;
}

/** Blocker ids of a `task_blockers_set` payload (refs `{entity_id}`, or plain ids). */
function stepBlockers(blockers: unknown[] | undefined): string[] {
  return (blockers ?? []).map(b => (typeof b === "string" ? b : b && typeof b === "object" ? (b as { entity_id?: unknown; id?: unknown }).entity_id ?? (b as { id?: unknown }).id : undefined))
    .filter((b): b is string => typeof b === "string" && b !== "");
}

function move(h: TaskHistoryStep): string {
  return typeof h.from === "string" || typeof h.to === "string" ? `${statusWord(h.from) || "?"} → ${statusWord(h.to) || "?"}` : "";
}

/** One step of a task's history: time, what happened (from → to, or which blockers), why, and where it was said. */
export function taskStepLine(h: TaskHistoryStep): string {
  let what: string;
  if (h.type === "task_created") {
    what = `**created**${typeof h.initial_status === "string" ? ` as ${statusWord(h.initial_status)}` : ""}`;
  } else if (h.type === "task_status_changed") {
    what = `**status changed**: ${move(h)}`;
  } else if (h.type === "task_transition_rejected") {
    what = `**transition rejected**: ${move(h)}`;
  } else if (h.type === "task_blockers_set") {
    const ids = stepBlockers(h.blockers);
    const kind = h.mode === "suggest" ? "suggested blockers" : "blockers";
    what = ids.length ? `**${kind} set**: ${ids.map(code).join(", ")}` : `**${kind} cleared**`;
  } else {
    const m = move(h);
    what = `**${escapeMarkdown(h.type.replace(/^task_/, "").replace(/_/g, " "))}**${m ? `: ${m}` : ""}`;
  }
  const reason = typeof h.reason === "string" && h.reason.trim() ? ` — ${escapeMarkdown(oneLine(h.reason, 300))}` : "";
  const session = h.session_id ? ` · session ${code(shortId(h.session_id))}` : "";
  const cite = normalizeCitation(h.citation ?? undefined);
  return `- ${formatTime(h.timestamp, true) || "unknown time"} · ${what}${reason}${session}${cite ? ` · ${citationLink(cite)}` : ""}`;
}

/** The document a task opens as: its state, description, blockers, possible duplicates and history, each step with
 * its citation linked. */
export function renderTask(d: TaskDetail): string {
  const cite = normalizeCitation(d.citation ?? undefined);
  const rows: [string, unknown][] = [
    ["Status", taskStatusLabel(d.status)],
    ["Project", d.project ?? ""],
    ["Task", code(d.id)],
    ["First seen", d.first_ts ? `${formatTime(d.first_ts, true)} UTC` : ""],
    ["Last changed", d.last_ts ? `${formatTime(d.last_ts, true)} UTC${cite ? ` by ${citationLink(cite)}` : ""}` : cite ? citationLink(cite) : ""],
  ];
  const out = [`# ${escapeMarkdown(oneLine(d.title, 300) || d.id)}`, "", ...keyValueTable(rows, ["Field", "Value"])];
  if (d.description.trim()) {
    out.push("## Description", "", d.description.trim().split(/\r\n|\r|\n/).map(l => escapeMarkdown(l)).join("  \n"), "");
  }
  out.push("## Blockers", "");
  if (d.blockers.length || d.blocker_suggestions.length) {
    out.push(...d.blockers.map(b => refLine(b, false)), ...d.blocker_suggestions.map(b => refLine(b, true)), "");
  } else {
    out.push("_None._", "");
  }
  if (d.suggested_same.length) out.push("## Maybe the same task as", "", ...d.suggested_same.map(id => `- ${code(id)}`), "");
  out.push("## History", "", ...(d.history.length ? d.history.map(taskStepLine) : ["_No history._"]), "");
  return out.join("\n");
}

/** A preference in the Insights view: its latest wording; how often it was stated, and where it holds. */
export function preferenceItemData(p: PreferenceInfo): TreeItemData {
  const where = p.scope ? "" : "every project";
  const flags = [p.mark === "pin" ? "pinned" : "", p.status === "superseded" ? "superseded" : ""].filter(Boolean);
  const description = [`${p.count}×`, where, ...flags].filter(Boolean).join(" · ");
  const tooltip = [
    oneLine(p.text, 500),
    `${p.polarity === "dont" ? "A rule against something" : "A preference"}, stated ${p.count} time${p.count === 1 ? "" : "s"}${p.scope ? ` in ${p.scope}` : " in several projects"}`,
    p.last_seen ? `Last stated ${formatTime(p.last_seen, true)} UTC` : "",
    p.superseded_by ? `Superseded by ${p.superseded_by}` : "",
    p.id,
  ].filter(Boolean).join("\n");
  return { label: oneLine(p.text, 100) || p.id, description, tooltip };
}

/** One statement of a preference: the sentence, its day and citation (it opens the prompt that said it). */
export function evidenceItemData(e: InsightEvidence): TreeItemData {
  const description = [day(e.timestamp), e.citation ?? ""].filter(Boolean).join(" · ");
  return { label: oneLine(e.text, 100), description, tooltip: [oneLine(e.text, 500), e.citation ?? ""].filter(Boolean).join("\n") };
}
