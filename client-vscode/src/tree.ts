import * as vscode from "vscode";
import { MemoryApi } from "./api";
import {
  blockerItemData, eventItemData, evidenceItemData, preferenceItemData, sessionItemData, TaskGroup, taskGroups, taskItemData, timelineEvents,
} from "./render";
import type { InsightEvidence, PreferenceInfo, SessionInfo, TaskInfo, TaskRef, TimelineEvent } from "./types";

export const OPEN_EVENT_COMMAND = "claudeMemory.openEvent";
export const OPEN_TASK_COMMAND = "claudeMemory.openTask";

export const NO_SESSIONS = "No sessions for this workspace's project (the claudeMemory.allProjects setting lists every project).";

export type Node =
  | { kind: "session"; session: SessionInfo }
  | { kind: "event"; event: TimelineEvent }
  | { kind: "message"; text: string };

export interface SessionsQuery { limit: number; eventsLimit: number }

/** Sessions (newest first), each expanding to its timeline events; clicking an event opens its details. */
export class SessionsTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly api: () => MemoryApi, private readonly query: () => SessionsQuery) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    try {
      if (!node) {
        const q = this.query();
        // scoped by the server: this workspace's project, or every project with claudeMemory.allProjects
        const sessions = await this.api().sessions({ limit: q.limit });
        return sessions.length ? sessions.map(session => ({ kind: "session", session })) : [{ kind: "message", text: NO_SESSIONS }];
      }
      if (node.kind === "session") {
        const t = await this.api().timeline({ session: node.session.session_id, limit: this.query().eventsLimit });
        const events = timelineEvents(t);
        return events.length ? events.map(event => ({ kind: "event", event })) : [{ kind: "message", text: "No events." }];
      }
      return [];
    } catch (e) {
      return [{ kind: "message", text: `Could not load: ${e instanceof Error ? e.message : String(e)}` }];
    }
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "message") return new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
    if (node.kind === "session") {
      const d = sessionItemData(node.session);
      const item = new vscode.TreeItem(d.label, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `session:${node.session.session_id}`;
      item.description = d.description;
      item.tooltip = d.tooltip;
      item.contextValue = "memorySession";
      item.iconPath = new vscode.ThemeIcon("history");
      return item;
    }
    const d = eventItemData(node.event);
    const item = new vscode.TreeItem(d.label, vscode.TreeItemCollapsibleState.None);
    item.id = `event:${node.event.session_id ?? ""}:${node.event.citation}`;
    item.description = d.description;
    item.tooltip = d.tooltip;
    item.contextValue = "memoryEvent";
    item.iconPath = new vscode.ThemeIcon(EVENT_ICONS[node.event.type ?? ""] ?? "circle-small");
    item.command = { command: OPEN_EVENT_COMMAND, title: "Open Memory", arguments: [node.event.citation] };
    return item;
  }
}

const EVENT_ICONS: Record<string, string> = {
  user_prompt: "account",
  agent_response: "comment",
  tool_use: "tools",
  compaction: "fold",
  compact_summary: "note",
  subagent_prompt: "organization",
};

export type TaskNode =
  | { kind: "group"; group: TaskGroup }
  | { kind: "task"; task: TaskInfo }
  | { kind: "blocker"; task: TaskInfo; blocker: TaskRef; suggested: boolean }
  | { kind: "message"; text: string };

export interface TasksQuery { limit: number }

/** Tasks by status (open groups expanded, empty ones hidden), each expanding to its blockers and suggested
 * blockers; clicking a task opens its history. No tasks: no nodes, so the view's welcome text shows. */
export class TasksTree implements vscode.TreeDataProvider<TaskNode> {
  private readonly changed = new vscode.EventEmitter<TaskNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly api: () => MemoryApi, private readonly query: () => TasksQuery) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: TaskNode): Promise<TaskNode[]> {
    if (!node) {
      try {
        // scoped by the server, as the sessions are: this workspace's project, or every project with claudeMemory.allProjects
        const tasks = await this.api().tasks({ limit: this.query().limit });
        return taskGroups(tasks).map(group => ({ kind: "group", group }));
      } catch (e) {
        return [{ kind: "message", text: `Could not load: ${e instanceof Error ? e.message : String(e)}` }];
      }
    }
    if (node.kind === "group") return node.group.tasks.map(task => ({ kind: "task", task }));
    if (node.kind === "task") {
      const { task } = node;
      return [
        ...task.blockers.map(blocker => ({ kind: "blocker" as const, task, blocker, suggested: false })),
        ...task.blocker_suggestions.map(blocker => ({ kind: "blocker" as const, task, blocker, suggested: true })),
      ];
    }
    return [];
  }

  getTreeItem(node: TaskNode): vscode.TreeItem {
    if (node.kind === "message") return new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
    if (node.kind === "group") {
      const { group } = node;
      const item = new vscode.TreeItem(group.label,
        group.open ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `tasks:${group.status}`;
      item.description = String(group.tasks.length);
      item.contextValue = "memoryTaskGroup";
      item.iconPath = new vscode.ThemeIcon(TASK_ICONS[group.status] ?? "circle-outline");
      return item;
    }
    if (node.kind === "task") {
      const { task } = node;
      const d = taskItemData(task);
      const parent = task.blockers.length + task.blocker_suggestions.length > 0;
      const item = new vscode.TreeItem(d.label, parent ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
      item.id = `task:${task.status}:${task.id}`;
      item.description = d.description;
      item.tooltip = d.tooltip;
      item.contextValue = "memoryTask";
      item.iconPath = new vscode.ThemeIcon(TASK_ICONS[task.status] ?? "circle-outline");
      item.command = { command: OPEN_TASK_COMMAND, title: "Open Task", arguments: [task.id] };
      return item;
    }
    const { blocker, suggested } = node;
    const d = blockerItemData(blocker, suggested);
    const item = new vscode.TreeItem(d.label, vscode.TreeItemCollapsibleState.None);
    item.id = `blocker:${node.task.status}:${node.task.id}:${suggested ? "suggested" : "set"}:${blocker.id}`;
    item.description = d.description;
    item.tooltip = d.tooltip;
    item.contextValue = suggested ? "memoryTaskSuggestedBlocker" : "memoryTaskBlocker";
    item.iconPath = new vscode.ThemeIcon(suggested ? "lightbulb" : BLOCKER_ICONS[blocker.type ?? ""] ?? "debug-breakpoint");
    // a blocking task opens as tasks do
    if (blocker.type === "task") item.command = { command: OPEN_TASK_COMMAND, title: "Open Task", arguments: [blocker.id] };
    return item;
  }
}

/** Icons of the task statuses (groups and tasks). */
export const TASK_ICONS: Record<string, string> = {
  in_progress: "play-circle",
  blocked: "circle-slash",
  pending: "circle-large-outline",
  done: "pass",
  cancelled: "close",
};

const BLOCKER_ICONS: Record<string, string> = {
  task: "checklist",
  artifact: "link",
  condition: "question",
};

export type InsightNode =
  | { kind: "preference"; preference: PreferenceInfo }
  | { kind: "evidence"; preference: PreferenceInfo; evidence: InsightEvidence; n: number }
  | { kind: "message"; text: string };

export interface InsightsQuery { limit: number }

/** The preferences and rules the user stated (pinned first, then the most often stated), each expanding to the
 * prompts that stated them; clicking one opens that prompt. None: no nodes, so the view's welcome text shows. */
export class InsightsTree implements vscode.TreeDataProvider<InsightNode> {
  private readonly changed = new vscode.EventEmitter<InsightNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly api: () => MemoryApi, private readonly query: () => InsightsQuery) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: InsightNode): Promise<InsightNode[]> {
    try {
      if (!node) {
        const found = await this.api().preferences({ limit: this.query().limit });
        return found.map(preference => ({ kind: "preference", preference }));
      }
      if (node.kind === "preference") {
        return node.preference.evidence.map((evidence, n) => ({ kind: "evidence", preference: node.preference, evidence, n }));
      }
      return [];
    } catch (e) {
      return [{ kind: "message", text: `Could not load: ${e instanceof Error ? e.message : String(e)}` }];
    }
  }

  getTreeItem(node: InsightNode): vscode.TreeItem {
    if (node.kind === "message") return new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
    if (node.kind === "preference") {
      const p = node.preference;
      const d = preferenceItemData(p);
      const item = new vscode.TreeItem(d.label, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `preference:${p.id}`;
      item.description = d.description;
      item.tooltip = d.tooltip;
      item.contextValue = "memoryPreference";
      item.iconPath = new vscode.ThemeIcon(p.mark === "pin" ? "pinned" : p.polarity === "dont" ? "circle-slash" : "check");
      return item;
    }
    const d = evidenceItemData(node.evidence);
    const item = new vscode.TreeItem(d.label, vscode.TreeItemCollapsibleState.None);
    item.id = `evidence:${node.preference.id}:${node.n}`;
    item.description = d.description;
    item.tooltip = d.tooltip;
    item.contextValue = "memoryEvent";
    item.iconPath = new vscode.ThemeIcon("account");
    if (node.evidence.citation) item.command = { command: OPEN_EVENT_COMMAND, title: "Open Memory", arguments: [node.evidence.citation] };
    return item;
  }
}
