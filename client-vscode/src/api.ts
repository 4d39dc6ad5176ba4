import { SERVER_COMMANDS, ServerCommand } from "./serverCommands";
import type {
  BlameArgs, BlameRange, BlameResult, DetailsItem, EditRecord, FileHistoryArgs, FileHistoryResult, ForgetArgs, ForgetResult, HistoryEvent, ImportArgs,
  InsightsArgs, JsonObject, PreferenceInfo,
  SearchArgs, SearchResult, SessionInfo, SessionsArgs, ShowArgs, StatusArgs, StatusResult, TaskArgs, TaskDetail, TaskHistoryStep, TaskInfo,
  TaskRef, TasksArgs, TimelineArgs, TimelineResult, WhyArgs, WhyResult,
} from "./types";

/** Sends one `workspace/executeCommand` request with ONE object argument; resolves to the JSON result. */
export type Requester = (command: ServerCommand, arg: object, workDoneToken?: string) => Promise<unknown>;

/** Typed face of the language server's memory commands: one method per server command. */
export class MemoryApi {
  constructor(private readonly request: Requester) {}

  async search(args: SearchArgs): Promise<SearchResult> {
    const r = (await this.request(SERVER_COMMANDS.search, args)) as Partial<SearchResult> | null;
    return { results: Array.isArray(r?.results) ? r.results : [], meta: r?.meta ?? {} };
  }

  async show(args: ShowArgs): Promise<DetailsItem | undefined> {
    return unwrapDetails(await this.request(SERVER_COMMANDS.show, args));
  }

  /** Around `refs`: windows of events. For a `session`: its events (newest first from the server), put
   * in session order as one window. */
  async timeline(args: TimelineArgs): Promise<TimelineResult> {
    const r = await this.request(SERVER_COMMANDS.timeline, args);
    if (Array.isArray(r)) return sessionWindow(r as HistoryEvent[], args.session);
    const t = (r ?? {}) as Partial<TimelineResult>;
    return { ...t, windows: Array.isArray(t.windows) ? t.windows : [], missing: t.missing ?? [] };
  }

  async forget(args: ForgetArgs): Promise<ForgetResult> {
    return ((await this.request(SERVER_COMMANDS.forget, args)) ?? {}) as ForgetResult;
  }

  async stats(): Promise<JsonObject> {
    return ((await this.request(SERVER_COMMANDS.stats, {})) ?? {}) as JsonObject;
  }

  async import(args: ImportArgs, workDoneToken?: string): Promise<JsonObject> {
    return ((await this.request(SERVER_COMMANDS.import, args, workDoneToken)) ?? {}) as JsonObject;
  }

  async status(args: StatusArgs = {}): Promise<StatusResult> {
    return ((await this.request(SERVER_COMMANDS.status, args)) ?? {}) as StatusResult;
  }

  async sessions(args: SessionsArgs): Promise<SessionInfo[]> {
    const r = await this.request(SERVER_COMMANDS.sessions, args);
    if (Array.isArray(r)) return r as SessionInfo[];
    const wrapped = (r as { sessions?: unknown } | null)?.sessions;
    return Array.isArray(wrapped) ? (wrapped as SessionInfo[]) : [];
  }

  async fileHistory(args: FileHistoryArgs): Promise<FileHistoryResult> {
    return fileHistoryResult(await this.request(SERVER_COMMANDS.fileHistory, args));
  }

  /** Which edit wrote each line of an open document (as the editor holds it). */
  async blame(args: BlameArgs): Promise<BlameResult> {
    return blameResult(await this.request(SERVER_COMMANDS.blame, args));
  }

  /** "Why is this code like this?" for lines of an open document: markdown, with the ranges behind it. */
  async why(args: WhyArgs): Promise<WhyResult> {
    const r = await this.request(SERVER_COMMANDS.why, args);
    const o = (r && typeof r === "object" ? r : {}) as Partial<WhyResult>;
    const b = blameResult(o);
    return { ...b, markdown: typeof o.markdown === "string" ? o.markdown : "" };
  }

  /** Tasks of the scope (the workspace's project by default), open ones first. */
  async tasks(args: TasksArgs = {}): Promise<TaskInfo[]> {
    const r = await this.request(SERVER_COMMANDS.tasks, args);
    const list = Array.isArray(r) ? r : (r as { tasks?: unknown } | null)?.tasks;
    return Array.isArray(list) ? list.map(taskInfo).filter((t): t is TaskInfo => t !== undefined) : [];
  }

  /** One task with its history; an unknown id is the server's error (one sentence). */
  async task(args: TaskArgs): Promise<TaskDetail | undefined> {
    return taskDetail(await this.request(SERVER_COMMANDS.task, args));
  }

  /** The preferences and rules the user stated in the scope (the workspace's project by default). */
  async preferences(args: InsightsArgs = {}): Promise<PreferenceInfo[]> {
    const r = await this.request(SERVER_COMMANDS.insights, args);
    const list = isObject(r) ? r.preferences : undefined;
    return Array.isArray(list) ? list.map(preferenceInfo).filter((p): p is PreferenceInfo => p !== undefined) : [];
  }
}

/** A preference with a string id and text; anything else -> undefined. */
export function preferenceInfo(r: unknown): PreferenceInfo | undefined {
  if (!isObject(r) || typeof r.id !== "string" || typeof r.text !== "string") return undefined;
  const evidence = (Array.isArray(r.evidence) ? r.evidence : []).filter(isObject).map(e => ({
    ...e, citation: strOrNull(e.citation), text: str(e.text) ?? "",
  }));
  return {
    ...r, id: r.id, text: r.text, polarity: str(r.polarity) ?? "do", count: typeof r.count === "number" ? r.count : evidence.length,
    status: str(r.status) ?? "standing", scope: strOrNull(r.scope), mark: strOrNull(r.mark), evidence,
  };
}

const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === "object" && !Array.isArray(x);
const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
const strOrNull = (x: unknown): string | null => (typeof x === "string" ? x : null);

/** A blocker reference with a string id; anything else -> undefined. */
export function taskRef(r: unknown): TaskRef | undefined {
  if (!isObject(r) || typeof r.id !== "string" || !r.id) return undefined;
  return {
    ...r, id: r.id, type: str(r.type), title: str(r.title) ?? r.id, status: strOrNull(r.status), placeholder: r.placeholder === true,
    candidates: Array.isArray(r.candidates) ? r.candidates : [],
  };
}

function taskRefs(x: unknown): TaskRef[] {
  return Array.isArray(x) ? x.map(taskRef).filter((b): b is TaskRef => b !== undefined) : [];
}

/** A listed task with a string id; a missing title or status defaults (the id, "pending"), blockers are kept only
 * when well-formed. Anything else -> undefined. */
export function taskInfo(r: unknown): TaskInfo | undefined {
  if (!isObject(r) || typeof r.id !== "string" || !r.id) return undefined;
  return {
    ...r,
    id: r.id,
    title: str(r.title)?.trim() || r.id,
    project: strOrNull(r.project),
    status: str(r.status) || "pending",
    blockers: taskRefs(r.blockers),
    blocker_suggestions: taskRefs(r.blocker_suggestions),
    first_ts: strOrNull(r.first_ts),
    last_ts: strOrNull(r.last_ts),
    citation: strOrNull(r.citation),
  };
}

/** `claudeMemory.task`'s answer: the task, with its description, suggested duplicates and history steps (each an
 * object with a string `type`). Not a task -> undefined. */
export function taskDetail(r: unknown): TaskDetail | undefined {
  const t = taskInfo(r);
  if (!t || !isObject(r)) return undefined;
  const history = (Array.isArray(r.history) ? r.history : []).filter((h): h is TaskHistoryStep => isObject(h) && typeof h.type === "string");
  return {
    ...t,
    description: str(r.description) ?? "",
    suggested_same: (Array.isArray(r.suggested_same) ? r.suggested_same : []).filter((x): x is string => typeof x === "string"),
    history,
  };
}

const isLine = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 1;

/** A blame answer with only well-formed ranges (1-based `start` <= `end`) and edits (objects with an id). */
export function blameResult(r: unknown): BlameResult {
  const o = (r && typeof r === "object" && !Array.isArray(r) ? r : {}) as Partial<BlameResult>;
  const ranges = (Array.isArray(o.ranges) ? o.ranges : []).filter((x): x is BlameRange =>
    !!x && typeof x === "object" && isLine(x.start) && isLine(x.end) && x.start <= x.end);
  const edits = (Array.isArray(o.edits) ? o.edits : []).filter((e): e is EditRecord =>
    !!e && typeof e === "object" && (typeof e.id === "number" || typeof e.id === "string"));
  return { ...o, ranges, edits };
}

/** `{path, symbol, events: [...]}` (a bare list of events is accepted too). */
export function fileHistoryResult(r: unknown): FileHistoryResult {
  if (Array.isArray(r)) return { events: r as HistoryEvent[] };
  const o = (r ?? {}) as Partial<FileHistoryResult>;
  return { ...o, events: Array.isArray(o.events) ? o.events : [] };
}

/** A session's stored events as one timeline window, oldest first. */
export function sessionWindow(events: HistoryEvent[], session?: string): TimelineResult {
  const ordered = [...events].reverse().sort((a, b) => (a.timestamp ?? "").localeCompare(b.timestamp ?? ""));
  return {
    windows: [{
      session_id: session ?? ordered[0]?.session_id,
      project: ordered[0]?.project ?? null,
      events: ordered.map((e, i) => ({
        id: e.id, citation: e.citation, type: e.type, timestamp: e.timestamp, session_id: e.session_id,
        position: i + 1, preview: (e.text ?? "").replace(/\s+/g, " ").trim().slice(0, 300),
      })),
    }],
    missing: [],
  };
}

/** `show` answers one details item; accept the service's `{details: [item], missing}` wrapper too. */
export function unwrapDetails(r: unknown): DetailsItem | undefined {
  if (!r || typeof r !== "object") return undefined;
  const wrapped = (r as { details?: unknown }).details;
  if (Array.isArray(wrapped)) return wrapped[0] as DetailsItem | undefined;
  return (r as DetailsItem).citation ? (r as DetailsItem) : undefined;
}
