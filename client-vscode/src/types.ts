// Shapes of the language server's command arguments and results (see docs/service-api.md).
// Results are read defensively: every field the extension does not strictly need is optional.

export type SearchMode = "hybrid" | "keyword" | "semantic";

// Argument objects, as `claude_memory.lsp.protocol` validates them (unknown keys are refused; camelCase).
// Without `project`, searches and session lists are scoped by the server: the workspace's project, or
// every project with the `claudeMemory.allProjects` setting (or `allProjects: true` here).
export interface SearchArgs { query: string; limit?: number; mode?: SearchMode; project?: string; allProjects?: boolean }
export interface ShowArgs { ref: string }
/** Either `refs` (the events around them) or `session` (that session's events). */
export interface TimelineArgs { refs?: string[]; session?: string; before?: number; after?: number; limit?: number }
/** The confirmation is the client's (a modal dialog); the server forgets what it is asked to. */
export interface ForgetArgs { refs: string[]; dryRun?: boolean }
export interface ImportArgs { project?: string }
/** `start: false` reports a stopped service as stopped instead of starting it. */
export interface StatusArgs { start?: boolean }
export interface SessionsArgs { project?: string; allProjects?: boolean; limit?: number }
export interface FileHistoryArgs { path?: string; uri?: string; symbol?: string; limit?: number }
/** An open document (`file:` URI): blamed as the editor holds its text. */
export interface BlameArgs { uri: string }
/** Lines `startLine`..`endLine` (1-based, inclusive; `endLine` defaults to `startLine`) of the document `uri`. */
export interface WhyArgs { uri: string; startLine: number; endLine?: number }
/** Tasks of the scope (as for sessions); `status` filters (default: every status), `open` keeps the open ones. */
export interface TasksArgs { status?: TaskStatus[]; open?: boolean; project?: string; allProjects?: boolean; limit?: number }
/** One task by its id (`task:<project>:<key>`, as `claudeMemory.tasks` gives it). */
export interface TaskArgs { id: string }

/** One layer-1 hit (`index` result). */
export interface SearchHit {
  rank?: number;
  id?: number | string;
  citation: string;
  summary?: string;
  score?: number;
  confidence?: string;
  type?: string;
  timestamp?: string;
  session_id?: string;
  project?: string | null;
  tokens?: number;
  /** Present when the server sends the full search shape instead of the index one. */
  text?: string;
  snippet?: string;
}

export interface SearchResult { results: SearchHit[]; meta?: Record<string, unknown> & { degraded?: string | null } }

export interface SourceRef {
  path?: string;
  line_start?: number;
  line_end?: number;
  byte_start?: number;
  byte_end?: number;
  uuid?: string;
}

/** An event in a timeline window, or a neighbour in a details item. */
export interface TimelineEvent {
  id?: number | string;
  citation: string;
  type?: string;
  timestamp?: string;
  session_id?: string;
  position?: number;
  preview?: string;
  is_target?: boolean;
}

export interface DetailsItem {
  id?: number | string;
  citation: string;
  type?: string;
  timestamp?: string;
  session_id?: string;
  project?: string | null;
  agent_id?: string | null;
  tool_name?: string | null;
  files?: string[];
  content?: string;
  text?: string;
  source?: SourceRef | null;
  tokens?: number;
  /** Its uses (every retrieval that reached Claude or a person), in how many sessions, and its graduation level. */
  citation_uses?: number;
  sessions_used?: number;
  last_used?: string | null;
  level?: number;
  neighbours?: TimelineEvent[];
}

/** A stored event as `history` answers it (a session's events: `claudeMemory.timeline {session}`). */
export interface HistoryEvent {
  id?: number | string;
  citation: string;
  type?: string;
  timestamp?: string;
  session_id?: string;
  project?: string | null;
  text?: string;
  files?: string[];
}

export interface FileHistoryResult { path?: string; symbol?: string | null; project?: string | null; file_events?: number; events: HistoryEvent[] }

export interface TimelineWindow { session_id?: string; project?: string | null; events: TimelineEvent[] }
export interface TimelineResult { windows: TimelineWindow[]; targets?: string[]; missing?: string[]; tokens?: number }

export interface SessionInfo {
  session_id: string;
  project?: string | null;
  title?: string | null;
  git_branch?: string | null;
  first_ts?: string | null;
  last_ts?: string | null;
  events?: number;
  prompts?: number;
  subagents?: number;
}

/** How a line range was matched to the edit that wrote it: `fuzzy` means changed since Claude wrote it. */
export type MatchMethod = "exact" | "normalized" | "fuzzy";

/** Lines `start`..`end` (1-based, inclusive) of a blamed file; `edit` null: Claude did not write them.
 * `edit` ids are 63-bit integers that JSON.parse rounds: compare them only with ids parsed from the same answer. */
export interface BlameRange { start: number; end: number; edit: number | string | null; confidence?: number; method?: MatchMethod | null }

/** A prompt or an answer quoted with an edit. */
export interface EditExcerpt { citation?: string | null; text?: string | null; timestamp?: string | null }

/** One remembered Write / Edit / MultiEdit of a file. */
export interface EditRecord {
  id: number | string;
  citation?: string | null;
  tool?: string | null;
  tool_use_id?: string | null;
  file?: string | null;
  session_id?: string | null;
  agent_id?: string | null;
  timestamp?: string | null;
  model?: string | null;
  source?: SourceRef | null;
  prompt?: EditExcerpt | null;
  answer?: EditExcerpt | null;
}

/** `claudeMemory.blame`: ranges cover every line of the document; `edits` are the records they point at. */
export interface BlameResult {
  path?: string;
  lines?: number;
  claude_lines?: number;
  edit_records?: number;
  sessions?: number;
  ranges: BlameRange[];
  edits: EditRecord[];
}

/** `claudeMemory.why`: the story of some lines as markdown, with the blame ranges (clipped) behind it. */
export interface WhyResult { markdown: string; path?: string; ranges: BlameRange[]; edits: EditRecord[] }

/** A task's state. Open: in_progress, blocked, pending; closed: done, cancelled. */
export type TaskStatus = "pending" | "in_progress" | "blocked" | "done" | "cancelled";

/** What blocks a task (or may: a suggestion read from its words): a task, an artifact (an issue, a URL) or a
 * condition; `placeholder`: the "Unknown blocker for: …" a task blocked without a named blocker gets. */
export interface TaskRef {
  id: string;
  type?: string;
  title?: string;
  status?: string | null;
  placeholder?: boolean;
  candidates?: unknown[];
}

/** A task as `claudeMemory.tasks` lists it; `citation`: the tool call that last changed it. */
export interface TaskInfo {
  id: string;
  title: string;
  project?: string | null;
  /** One of {@link TaskStatus} (kept a string: a newer server may add one). */
  status: string;
  blockers: TaskRef[];
  blocker_suggestions: TaskRef[];
  first_ts?: string | null;
  last_ts?: string | null;
  citation?: string | null;
}

/** One step of a task's history, with the payload of its kind: `initial_status` (task_created), `from`/`to`
 * (task_status_changed, task_transition_rejected), `reason`, `mode` and `blockers` (task_blockers_set). */
export interface TaskHistoryStep {
  type: string;
  timestamp?: string | null;
  session_id?: string | null;
  citation?: string | null;
  initial_status?: string;
  from?: string;
  to?: string;
  reason?: string;
  mode?: string;
  blockers?: unknown[];
  [key: string]: unknown;
}

/** `claudeMemory.task`: the task, its description, tasks it may be the same as, and its history (oldest first). */
export interface TaskDetail extends TaskInfo {
  description: string;
  suggested_same: string[];
  history: TaskHistoryStep[];
}

/** One statement behind an insight: the prompt's citation and the sentence that stated it. */
export interface InsightEvidence {
  citation: string | null;
  timestamp?: string | null;
  session_id?: string | null;
  project?: string | null;
  text: string;
}

/** A preference or rule the user stated (`claudeMemory.insights`): its latest wording, how often it was stated,
 * where it holds (`scope` null: every project), and whether a later contrary statement superseded it. */
export interface PreferenceInfo {
  id: string;
  text: string;
  polarity: string;
  count: number;
  scope?: string | null;
  status: string;
  mark?: string | null;
  explicit?: boolean;
  superseded_by?: string | null;
  last_seen?: string | null;
  evidence: InsightEvidence[];
}

export interface InsightsArgs { project?: string; allProjects?: boolean; all?: boolean; limit?: number }

export interface ForgetResult { matching?: number; forgotten?: number }

/** The embedding model's download by the memory service (status.embedding.download). */
export interface ModelDownload {
  state?: "idle" | "downloading" | "ready" | "failed" | "removed";
  bytes?: number | null;
  total?: number | null;
  error?: string | null;
  retry_in?: number | null;
}

export interface StatusResult {
  running?: boolean;
  language_server?: {
    version?: string;
    data_dir?: string;
    workspace?: { folder?: string; project?: string | null }[];
    settings?: { allProjects?: boolean } & Record<string, unknown>;
  } | null;
  service?: { version?: string; pid?: number; data_dir?: string; uptime_seconds?: number; queued_tasks?: number } | null;
  store?: { events?: number } | null;
  embedding?: {
    model?: string; available?: boolean; reason?: string | null; pending?: number; failed?: number; vectors?: number;
    download?: ModelDownload | null;
  } | null;
  /** Endless mode (docs/architecture.md, "What the memory learns"); mode "session" is the default. */
  endless?: { mode?: string; working_set?: number; continuity?: number; transition?: string | null; consolidated?: number } | null;
  warnings?: string[];
  error?: string | null;
}

export type JsonObject = Record<string, unknown>;
