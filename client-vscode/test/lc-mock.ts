// Mock of `vscode-languageclient/node`: records the client that was created and every request; a test
// answers `workspace/executeCommand` through `server.handle`.
/* eslint-disable @typescript-eslint/no-explicit-any */
export enum TransportKind { stdio = 0, ipc = 1, pipe = 2, socket = 3 }
export enum State { Stopped = 1, Starting = 3, Running = 2 }
export const ExecuteCommandRequest = { type: { method: "workspace/executeCommand" } };
export const WorkDoneProgress = { type: { method: "$/progress" } };

export interface Sent { command: string; arg: any; params: any }

export const server = {
  sent: [] as Sent[],
  progressListeners: new Map<string, (v: any) => void>(),
  handle: (_command: string, _arg: any): any => null,
  failStart: false,
  reset() { this.sent = []; this.progressListeners.clear(); this.handle = () => null; },
};

export const created: LanguageClient[] = [];

export class LanguageClient {
  started = false;
  constructor(public id: string, public name: string, public serverOptions: any, public clientOptions: any) { created.push(this); }
  async start() { if (server.failStart) throw new Error("spawn claude-memory ENOENT"); this.started = true; }
  async stop() { this.started = false; }
  async sendRequest(type: any, params: any) {
    if (type !== ExecuteCommandRequest.type) throw new Error("unexpected request " + JSON.stringify(type));
    if (!Array.isArray(params.arguments) || params.arguments.length !== 1) throw new Error("expected ONE argument");
    server.sent.push({ command: params.command, arg: params.arguments[0], params });
    const r = await server.handle(params.command, params.arguments[0]);
    return r instanceof Error ? Promise.reject(r) : JSON.parse(JSON.stringify(r ?? null));
  }
  onProgress(_type: any, token: string, handler: (v: any) => void) {
    server.progressListeners.set(token, handler);
    return { dispose: () => server.progressListeners.delete(token) };
  }
}
