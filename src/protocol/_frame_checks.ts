// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/*
 * The required fields of each flat frame, as data the guards check. The spec
 * types are derived from the frame types: a spec must name exactly the
 * required fields of its frame (the compiler rejects a missing or an extra
 * one), so the types and the checks cannot drift apart.
 */

import { isRecord } from "../_values.ts";
import type { ConversationFrame } from "./messages.ts";
import type { SystemFrameMap, SystemSubtype } from "./system_frame.ts";

/** What a required field must hold. */
export type FieldKind =
  | "string"
  | "number"
  | "boolean"
  | "array"
  | "object"
  | "string|null"
  | "number|null"
  | "object|null";

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** The required fields of frame `T` besides `type` and `subtype`, each with its kind. */
export type FieldSpec<T> = {
  readonly [K in Exclude<RequiredKeys<T>, "type" | "subtype">]: FieldKind;
};

/** The flat top-level frame types (their guards are these specs). */
type FlatType =
  | "command_lifecycle"
  | "tool_progress"
  | "auth_status"
  | "rate_limit_event"
  | "tool_use_summary"
  | "prompt_suggestion"
  | "conversation_reset"
  | "active_goal"
  | "transcript_mirror";

/** The flat top-level frames, by type. */
export type FlatFrameMap = { [T in FlatType]: Extract<ConversationFrame, { type: T }> };

export const FLAT_FIELDS: { readonly [T in keyof FlatFrameMap]: FieldSpec<FlatFrameMap[T]> } = {
  command_lifecycle: { command_uuid: "string", state: "string" },
  tool_progress: {
    tool_use_id: "string",
    tool_name: "string",
    parent_tool_use_id: "string|null",
    elapsed_time_seconds: "number",
  },
  auth_status: { isAuthenticating: "boolean", output: "array" },
  rate_limit_event: { rate_limit_info: "object" },
  tool_use_summary: { summary: "string", preceding_tool_use_ids: "array" },
  prompt_suggestion: { suggestion: "string" },
  conversation_reset: { new_conversation_id: "string" },
  active_goal: { value: "object|null" },
  transcript_mirror: { filePath: "string", entries: "array" },
};

const TASK = { task_id: "string" } as const;
const HOOK = { hook_id: "string", hook_name: "string", hook_event: "string" } as const;
const HOOK_OUTPUT = { stdout: "string", stderr: "string", output: "string" } as const;

export const SYSTEM_FIELDS: {
  readonly [S in SystemSubtype]: FieldSpec<SystemFrameMap[S]>;
} = {
  init: { session_id: "string" },
  status: { status: "string|null" },
  api_retry: {
    attempt: "number",
    max_retries: "number",
    retry_delay_ms: "number",
    error_status: "number|null",
  },
  session_state_changed: { state: "string" },
  compact_boundary: { compact_metadata: "object" },
  control_request_progress: { request_id: "string", status: "string" },
  model_refusal_fallback: {
    original_model: "string",
    fallback_model: "string",
    content: "string",
  },
  model_refusal_no_fallback: { original_model: "string", content: "string" },
  thinking_tokens: { estimated_tokens: "number", estimated_tokens_delta: "number" },
  worker_shutting_down: { reason: "string" },
  plugin_install: { status: "string" },
  files_persisted: { files: "array", failed: "array" },
  mirror_error: { error: "string" },
  session_writes_lost: { error_code: "string", lost: "array" },
  informational: { content: "string", level: "string" },
  notification: { key: "string", text: "string", priority: "string" },
  permission_denied: { tool_name: "string", tool_use_id: "string", message: "string" },
  local_command_output: { content: "string" },
  commands_changed: { commands: "array" },
  memory_recall: { mode: "string", memories: "array" },
  elicitation_complete: { mcp_server_name: "string", elicitation_id: "string" },
  task_started: { ...TASK, description: "string" },
  task_updated: { ...TASK, patch: "object" },
  task_progress: { ...TASK, description: "string", usage: "object" },
  task_notification: { ...TASK, status: "string", output_file: "string", summary: "string" },
  background_tasks_changed: { tasks: "array" },
  hook_started: HOOK,
  hook_progress: { ...HOOK, ...HOOK_OUTPUT },
  hook_response: { ...HOOK, ...HOOK_OUTPUT, outcome: "string" },
};

function holds(kind: FieldKind, value: unknown): boolean {
  switch (kind) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return isRecord(value);
    case "string|null":
      return value === null || typeof value === "string";
    case "number|null":
      return value === null || typeof value === "number";
    case "object|null":
      return value === null || isRecord(value);
  }
}

/** Tells whether `o` has every field of `spec`, each of its kind. */
export function hasFields(
  o: Record<string, unknown>,
  spec: Readonly<Record<string, FieldKind>>,
): boolean {
  for (const [field, kind] of Object.entries(spec)) {
    if (!holds(kind, o[field])) return false;
  }
  return true;
}
