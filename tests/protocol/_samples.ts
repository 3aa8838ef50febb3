// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * One sample of every member of the official SDK's message union (0.3.332,
 * `SDKMessage` in `sdk.d.ts`, plus `SDKActiveGoalMessage` and the
 * `transcript_mirror` frame its stdout union carries), shaped as `sdk.d.ts`
 * types them. Where the real CLI wrote one offline, the recorded frame in
 * `fixtures/frames-2.1.332.ndjson` is tested as well.
 *
 * @module
 */

const S = { uuid: "0b8e3c1a-5a7f-4f4e-9d1e-2f3a4b5c6d7e", session_id: "aa1e83cc-c435-4e8e" };

/** A sample frame, named by its SDK type. */
export interface Sample {
  readonly sdkType: string;
  readonly frame: Record<string, unknown>;
}

function sys(subtype: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { type: "system", subtype, ...fields, ...S };
}

const TASK = { task_id: "a6cc720b8891b10c3", run_id: "0mx4mddc1-7649985b" };
const HOOK = { hook_id: "333ea22d", hook_name: "Stop", hook_event: "Stop" };

/** The SDK's union members, one each (the two `user` shapes and two `result` shapes apart). */
export const SAMPLES: readonly Sample[] = [
  {
    sdkType: "SDKAssistantMessage",
    frame: {
      type: "assistant",
      message: {
        id: "msg_1",
        role: "assistant",
        model: "claude-opus-5-5",
        content: [{ type: "text", text: "Hi" }],
        stop_reason: null,
      },
      parent_tool_use_id: null,
      ...S,
    },
  },
  {
    sdkType: "SDKUserMessage",
    frame: {
      type: "user",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }],
      },
      parent_tool_use_id: null,
      ...S,
    },
  },
  {
    sdkType: "SDKUserMessageReplay",
    frame: {
      type: "user",
      message: { role: "user", content: "hello" },
      parent_tool_use_id: null,
      isReplay: true,
      ...S,
    },
  },
  {
    sdkType: "SDKResultSuccess",
    frame: {
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Hi",
      num_turns: 1,
      ...S,
    },
  },
  {
    sdkType: "SDKResultError",
    frame: {
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      errors: ["aborted"],
      ...S,
    },
  },
  { sdkType: "SDKSystemMessage", frame: sys("init", { cwd: "/w", tools: ["Bash"] }) },
  {
    sdkType: "SDKPartialAssistantMessage",
    frame: {
      type: "stream_event",
      event: { type: "message_start", message: {} },
      parent_tool_use_id: null,
      ...S,
    },
  },
  {
    sdkType: "SDKCompactBoundaryMessage",
    frame: sys("compact_boundary", { compact_metadata: { trigger: "manual", pre_tokens: 44 } }),
  },
  { sdkType: "SDKStatusMessage", frame: sys("status", { status: "compacting" }) },
  {
    sdkType: "SDKAPIRetryMessage",
    frame: sys("api_retry", {
      attempt: 1,
      max_retries: 1,
      retry_delay_ms: 500,
      error_status: 500,
      error: "server_error",
    }),
  },
  {
    sdkType: "SDKControlRequestProgressMessage",
    frame: sys("control_request_progress", { request_id: "req_1", status: "started" }),
  },
  {
    sdkType: "SDKModelRefusalFallbackMessage",
    frame: sys("model_refusal_fallback", {
      trigger: "refusal",
      direction: "retry",
      original_model: "claude-opus-5-5",
      fallback_model: "claude-sonnet-5-5",
      request_id: null,
      content: "Retrying on Sonnet",
    }),
  },
  {
    sdkType: "SDKModelRefusalNoFallbackMessage",
    frame: sys("model_refusal_no_fallback", {
      original_model: "claude-opus-5-5",
      request_id: null,
      content: "The model declined",
    }),
  },
  {
    sdkType: "SDKLocalCommandOutputMessage",
    frame: sys("local_command_output", { content: "Total cost: $0.00" }),
  },
  { sdkType: "SDKHookStartedMessage", frame: sys("hook_started", HOOK) },
  {
    sdkType: "SDKHookProgressMessage",
    frame: sys("hook_progress", { ...HOOK, stdout: "half", stderr: "", output: "half" }),
  },
  {
    sdkType: "SDKHookResponseMessage",
    frame: sys("hook_response", {
      ...HOOK,
      output: "done\n",
      stdout: "done\n",
      stderr: "",
      exit_code: 0,
      outcome: "success",
    }),
  },
  {
    sdkType: "SDKPluginInstallMessage",
    frame: sys("plugin_install", { status: "installed", name: "market" }),
  },
  {
    sdkType: "SDKToolProgressMessage",
    frame: {
      type: "tool_progress",
      tool_use_id: "toolu_1",
      tool_name: "Bash",
      parent_tool_use_id: null,
      elapsed_time_seconds: 3,
      ...S,
    },
  },
  {
    sdkType: "SDKAuthStatusMessage",
    frame: { type: "auth_status", isAuthenticating: true, output: ["Opening browser"], ...S },
  },
  {
    sdkType: "SDKTaskNotificationMessage",
    frame: sys("task_notification", {
      ...TASK,
      status: "completed",
      output_file: "/tmp/a.output",
      summary: "Echo: sub agent prompt",
    }),
  },
  {
    sdkType: "SDKTaskStartedMessage",
    frame: sys("task_started", { ...TASK, description: "sub task", task_type: "local_agent" }),
  },
  {
    sdkType: "SDKTaskUpdatedMessage",
    frame: sys("task_updated", {
      ...TASK,
      patch: { status: "completed", end_time: 1796124867438 },
    }),
  },
  {
    sdkType: "SDKTaskProgressMessage",
    frame: sys("task_progress", {
      ...TASK,
      description: "sub task",
      usage: { total_tokens: 48, tool_uses: 0, duration_ms: 181 },
    }),
  },
  {
    sdkType: "SDKBackgroundTasksChangedMessage",
    frame: sys("background_tasks_changed", {
      tasks: [{ task_id: "a6c", task_type: "local_agent", description: "sub task" }],
    }),
  },
  {
    sdkType: "SDKThinkingTokensMessage",
    frame: sys("thinking_tokens", { estimated_tokens: 120, estimated_tokens_delta: 20 }),
  },
  {
    sdkType: "SDKSessionStateChangedMessage",
    frame: sys("session_state_changed", { state: "idle" }),
  },
  {
    sdkType: "SDKWorkerShuttingDownMessage",
    frame: sys("worker_shutting_down", { reason: "host_exit" }),
  },
  {
    sdkType: "SDKCommandsChangedMessage",
    frame: sys("commands_changed", { commands: [{ name: "review", description: "Review" }] }),
  },
  {
    sdkType: "SDKNotificationMessage",
    frame: sys("notification", { key: "k1", text: "Background task done", priority: "medium" }),
  },
  {
    sdkType: "SDKFilesPersistedEvent",
    frame: sys("files_persisted", {
      files: [{ filename: "a.txt", file_id: "file_1" }],
      failed: [],
      processed_at: "2026-01-01T00:00:00Z",
    }),
  },
  {
    sdkType: "SDKToolUseSummaryMessage",
    frame: {
      type: "tool_use_summary",
      summary: "Ran two shell commands",
      preceding_tool_use_ids: ["toolu_1", "toolu_2"],
      ...S,
    },
  },
  {
    sdkType: "SDKMemoryRecallMessage",
    frame: sys("memory_recall", {
      mode: "select",
      memories: [{ path: "/home/u/.claude/m.md", scope: "personal" }],
    }),
  },
  {
    sdkType: "SDKRateLimitEvent",
    frame: {
      type: "rate_limit_event",
      rate_limit_info: { status: "allowed_warning", utilization: 0.8 },
      ...S,
    },
  },
  {
    sdkType: "SDKElicitationCompleteMessage",
    frame: sys("elicitation_complete", { mcp_server_name: "auth", elicitation_id: "e1" }),
  },
  {
    sdkType: "SDKPermissionDeniedMessage",
    frame: sys("permission_denied", {
      tool_name: "Bash",
      tool_use_id: "toolu_1",
      decision_reason_type: "mode",
      message: "Denied in dontAsk mode",
    }),
  },
  {
    sdkType: "SDKPromptSuggestionMessage",
    frame: { type: "prompt_suggestion", suggestion: "Now run the tests", ...S },
  },
  {
    sdkType: "SDKMirrorErrorMessage",
    frame: sys("mirror_error", {
      error: "append timed out",
      key: { projectKey: "p", sessionId: "s" },
    }),
  },
  {
    sdkType: "SDKInformationalMessage",
    frame: sys("informational", { content: "Hook failed", level: "warning", tag: "x" }),
  },
  {
    sdkType: "SDKConversationResetMessage",
    frame: { type: "conversation_reset", new_conversation_id: "c2", trigger: "clear", ...S },
  },
  {
    sdkType: "SDKSessionWritesLostMessage",
    frame: sys("session_writes_lost", { error_code: "ENOSPC", lost: ["transcript"] }),
  },
  {
    sdkType: "SDKActiveGoalMessage",
    frame: {
      type: "active_goal",
      value: { condition: "tests pass", iterations: 2, set_at: 1, tokens_at_start: 10 },
      ...S,
    },
  },
  {
    sdkType: "transcript_mirror",
    frame: { type: "transcript_mirror", filePath: "/h/s.jsonl", entries: [{ type: "user" }] },
  },
];
