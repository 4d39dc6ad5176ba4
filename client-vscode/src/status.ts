import * as vscode from "vscode";
import { MemoryApi } from "./api";
import { statusText, StatusView } from "./render";

export const REFRESH_STATUS_COMMAND = "claudeMemory.refreshStatus";

/** Status bar item: is the memory service running, and how much is still waiting to be embedded. */
export class StatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private timer: ReturnType<typeof setInterval> | undefined;
  last: StatusView | undefined;

  constructor(private readonly api: () => MemoryApi) {
    this.item = vscode.window.createStatusBarItem("claude-memory.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "Claude Memory";
    this.item.command = REFRESH_STATUS_COMMAND;
    this.show({ text: "$(sync~spin) Memory", tooltip: "Claude Memory: starting the language server…", ok: true });
    this.item.show();
  }

  show(v: StatusView): void {
    this.last = v;
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
    this.item.backgroundColor = v.ok ? undefined : new vscode.ThemeColor("statusBarItem.warningBackground");
  }

  /** Ask for the status; `start: false` (the timer) never starts a stopped service just to report on it. */
  async refresh(start = true): Promise<StatusView> {
    let v: StatusView;
    try {
      v = statusText(await this.api().status(start ? {} : { start: false }));
    } catch (e) {
      v = statusText(undefined, e instanceof Error ? e.message : String(e));
    }
    this.show(v);
    return v;
  }

  /** Refresh every `seconds` (0 = only on demand). */
  schedule(seconds: number): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = seconds > 0 ? setInterval(() => void this.refresh(false), seconds * 1000) : undefined;
    this.timer?.unref?.(); // never keeps a process alive by itself
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.item.dispose();
  }
}
