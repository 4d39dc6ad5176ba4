import * as vscode from "vscode";
import { MemoryApi } from "./api";
import { eventItemData, sessionItemData, timelineEvents } from "./render";
import type { SessionInfo, TimelineEvent } from "./types";

export const OPEN_EVENT_COMMAND = "claudeMemory.openEvent";

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
