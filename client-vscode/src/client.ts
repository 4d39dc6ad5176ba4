import * as vscode from "vscode";
import {
  ExecuteCommandRequest, Executable, LanguageClient, LanguageClientOptions, Middleware, ServerOptions, WorkDoneProgress,
} from "vscode-languageclient/node";
import { fileHistoryResult, Requester, unwrapDetails } from "./api";
import { initializationOptions, readSettings, SECTION, ServerSettings } from "./config";
import type { WorkDoneValue } from "./commands";
import { renderDetails, renderFileHistory, renderTimeline } from "./render";
import { SERVER_COMMANDS, ServerCommand } from "./serverCommands";
import type { JsonObject, TimelineResult } from "./types";

export const CLIENT_ID = SECTION; // so `claudeMemory.trace.server` traces the protocol

/**
 * How to start `claude-memory lsp`: `claudeMemory.server.command` + `claudeMemory.server.args`, or, when
 * `claudeMemory.server.pythonPath` is set, `<python> -m claude_memory <args>`. No `transport` on purpose:
 * with `TransportKind.stdio` vscode-languageclient appends `--stdio` to the arguments.
 */
export function serverOptions(s: ServerSettings, baseEnv: NodeJS.ProcessEnv = process.env): Executable {
  const env: NodeJS.ProcessEnv = { ...baseEnv, ...s.env };
  if (s.dataDir) env["CLAUDE_MEMORY_HOME"] = s.dataDir;
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const options = cwd ? { env, cwd } : { env };
  if (s.pythonPath) return { command: s.pythonPath, args: ["-m", "claude_memory", ...s.args], options };
  return { command: s.command, args: [...s.args], options };
}

export interface UiHooks {
  /** Show markdown for a server command run from the UI (a code lens, a hover link). */
  showResult: (name: string, markdown: string) => Promise<void>;
}

/**
 * Server commands the languageclient registers itself (from the server's executeCommandProvider) are run
 * by code lenses and hover links; show their results instead of dropping them.
 */
export function commandMiddleware(ui: UiHooks): Middleware {
  return {
    executeCommand: async (command, args, next) => {
      const result: unknown = await next(command, args);
      const arg = (args?.[0] ?? {}) as JsonObject;
      if (command === SERVER_COMMANDS.show) {
        const d = unwrapDetails(result);
        if (d) await ui.showResult(d.citation, renderDetails(d));
      } else if (command === SERVER_COMMANDS.timeline && result && typeof result === "object") {
        const t = result as TimelineResult;
        const title = Array.isArray(arg["refs"]) ? (arg["refs"] as string[]).join(", ") : String(arg["path"] ?? arg["session"] ?? "timeline");
        await ui.showResult(`timeline-${title}`, renderTimeline({ ...t, windows: Array.isArray(t.windows) ? t.windows : [] }, title));
      } else if (command === SERVER_COMMANDS.fileHistory && result && typeof result === "object") {
        // the code lens sends {uri}; a client may send {path}
        const path = typeof arg["path"] === "string" ? arg["path"] : typeof arg["uri"] === "string" ? vscode.Uri.parse(arg["uri"]).fsPath : "";
        const h = fileHistoryResult(result);
        const name = (h.path ?? path).split(/[\\/]/).pop() ?? "file";
        await ui.showResult(`history-${name}`, renderFileHistory(h, path, arg["symbol"] as string | undefined));
      }
      return result;
    },
  };
}

export function createClient(output: vscode.LogOutputChannel, ui: UiHooks): LanguageClient {
  const server: ServerOptions = serverOptions(readSettings().server);
  const clientOptions: LanguageClientOptions = {
    // hovers on `mem:` citations and code history apply to any document
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    initializationOptions: initializationOptions(),
    synchronize: { configurationSection: SECTION },
    outputChannel: output,
    middleware: commandMiddleware(ui),
  };
  return new LanguageClient(CLIENT_ID, "Claude Memory", server, clientOptions);
}

/** A Requester over `workspace/executeCommand` with the command's ONE object argument. */
export function requester(client: () => Promise<LanguageClient>): Requester {
  return async (command: ServerCommand, arg: object, workDoneToken?: string) => {
    const c = await client();
    const params = workDoneToken ? { command, arguments: [arg], workDoneToken } : { command, arguments: [arg] };
    return c.sendRequest(ExecuteCommandRequest.type, params);
  };
}

export function onWorkDone(client: LanguageClient, token: string, listener: (v: WorkDoneValue) => void): vscode.Disposable {
  return client.onProgress(WorkDoneProgress.type, token, v => listener(v as WorkDoneValue));
}
