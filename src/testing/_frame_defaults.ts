// This module is browser compatible.
/* The defaults every frame builder shares (session id, model, cwd, tools,
 * cost) and the fresh ids and timestamps they stamp. */

/** The session id frames carry when none is given. */
export const DEFAULT_SESSION_ID = "5e55f00d-0000-4000-8000-000000000000";
/** The model frames name when none is given. */
export const DEFAULT_MODEL = "claude-opus-5-5";
/** The working directory of `system/init` when none is given. */
export const DEFAULT_CWD = "/home/user/project";
/** The tool names of `system/init` when none are given (a subset of the real list). */
export const DEFAULT_TOOLS = [
  "Task",
  "AskUserQuestion",
  "Bash",
  "Edit",
  "ExitPlanMode",
  "NotebookEdit",
  "Read",
  "Skill",
  "TaskStop",
  "ToolSearch",
  "WebFetch",
  "WebSearch",
  "Write",
];
/** The cost of a `result` frame when none is given. */
export const TURN_COST_USD = 0.000308;
let counter = 0;

/** The usage of a Messages-API message as it starts (fresh each call). */
export function messageUsage(): {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
} {
  return {
    input_tokens: 42,
    output_tokens: 1,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

/** A fresh id, `<prefix>_<N>`, N counting over the whole process. */
export function nextId(prefix: string): string {
  counter += 1;
  return `${prefix}_${counter}`;
}

/** Now, as frames carry it (ISO 8601). */
export function timestamp(): string {
  return new Date().toISOString();
}
