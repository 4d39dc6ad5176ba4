// The language server's `workspace/executeCommand` commands, exactly as `claude-memory lsp` names them
// (`claude_memory.lsp.protocol.COMMANDS`). tests/unit/test_vscode_commands.py checks the two lists match.
// Each command takes ONE JSON object argument and returns JSON.
export const SERVER_COMMANDS = {
  search: "claudeMemory.search",
  timeline: "claudeMemory.timeline",
  show: "claudeMemory.show",
  forget: "claudeMemory.forget",
  stats: "claudeMemory.stats",
  import: "claudeMemory.import",
  status: "claudeMemory.status",
  sessions: "claudeMemory.sessions",
  fileHistory: "claudeMemory.fileHistory",
  blame: "claudeMemory.blame",
  why: "claudeMemory.why",
  tasks: "claudeMemory.tasks",
  task: "claudeMemory.task",
  insights: "claudeMemory.insights",
} as const;

export type ServerCommandKey = keyof typeof SERVER_COMMANDS;
export type ServerCommand = (typeof SERVER_COMMANDS)[ServerCommandKey];

export const ALL_SERVER_COMMANDS: readonly ServerCommand[] = Object.values(SERVER_COMMANDS);
