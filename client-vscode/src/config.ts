import * as vscode from "vscode";
import type { SearchMode } from "./types";

export const SECTION = "claudeMemory";
export const EXTENSION_VERSION = "0.1.0";

/** Settings the language server reads itself (`claude_memory.lsp.settings.LspSettings`), flat in the section. */
export const SERVER_SETTING_KEYS = [
  "hoverCitations", "hoverCode", "hoverLimit", "hoverMaxChars", "codeLens", "searchLimit", "searchMode",
  "allProjects", "startService", "startTimeout", "requestTimeout", "hoverProvenance", "codeLensProvenance",
] as const;

/** The extension's own line annotations (`claudeMemory.annotations.*`). */
export interface AnnotationSettings { currentLine: boolean; gutter: boolean }

export interface ServerSettings { command: string; args: string[]; pythonPath: string; env: Record<string, string>; dataDir: string }

export interface Settings {
  server: ServerSettings;
  searchLimit: number;
  searchMode: SearchMode;
  timelineWindow: number;
  sessionsLimit: number;
  tasksLimit: number;
  statusRefreshSeconds: number;
  openAs: "preview" | "source";
  annotations: AnnotationSettings;
}

function num(v: unknown, dflt: number, min: number, max: number): number {
  return typeof v === "number" && Number.isFinite(v) ? Math.min(max, Math.max(min, Math.round(v))) : dflt;
}

function bool(v: unknown, dflt: boolean): boolean {
  return typeof v === "boolean" ? v : dflt;
}

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === "object" && !Array.isArray(v)) {
    for (const [k, val] of Object.entries(v)) if (typeof val === "string") out[k] = val;
  }
  return out;
}

/** The extension's settings, each checked and defaulted here at the boundary (a bad value falls back). */
export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const args = c.get<unknown>("server.args", ["lsp"]);
  const mode = c.get<string>("searchMode", "hybrid");
  const command = c.get<unknown>("server.command", "claude-memory");
  const python = c.get<unknown>("server.pythonPath", "");
  const dataDir = c.get<unknown>("dataDir", "");
  return {
    server: {
      command: (typeof command === "string" && command.trim()) || "claude-memory",
      args: Array.isArray(args) && args.every(a => typeof a === "string") ? args : ["lsp"],
      pythonPath: typeof python === "string" ? python.trim() : "",
      env: stringRecord(c.get<unknown>("server.env", {})),
      dataDir: typeof dataDir === "string" ? dataDir.trim() : "",
    },
    searchLimit: num(c.get("searchLimit"), 10, 1, 100),
    searchMode: mode === "keyword" || mode === "semantic" ? mode : "hybrid",
    timelineWindow: num(c.get("timeline.window"), 3, 0, 50),
    sessionsLimit: num(c.get("sessions.limit"), 50, 1, 1000),
    tasksLimit: num(c.get("tasks.limit"), 200, 1, 10000),
    statusRefreshSeconds: num(c.get("status.refreshSeconds"), 30, 0, 86400),
    openAs: c.get<string>("details.openAs", "preview") === "source" ? "source" : "preview",
    annotations: readAnnotationSettings(),
  };
}

/** Read on every cursor move: only the two annotation settings. */
export function readAnnotationSettings(): AnnotationSettings {
  const c = vscode.workspace.getConfiguration(SECTION);
  return { currentLine: bool(c.get("annotations.currentLine"), true), gutter: bool(c.get("annotations.gutter"), false) };
}

/** `initializationOptions`: the server's own settings (it validates them, reports a bad one and falls back);
 * later changes reach it through `workspace/configuration`. */
export function initializationOptions(): Record<string, unknown> {
  const c = vscode.workspace.getConfiguration(SECTION);
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const v = c.get<unknown>(key);
    if (v !== undefined && v !== null) out[key] = v;
  }
  return { [SECTION]: out, client: { name: "vscode", extensionVersion: EXTENSION_VERSION } };
}
