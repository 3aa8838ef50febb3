/**
 * The one place this entry imports the Agent Client Protocol library
 * (`@agentclientprotocol/sdk`, pinned in `deno.json`; stable ACP v1).
 *
 * @module
 */

export {
  agent,
  AgentApp,
  type AgentConnection,
  type AgentContext,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type Stream,
} from "@agentclientprotocol/sdk";
export type {
  AvailableCommand,
  CancelNotification,
  ClientCapabilities,
  CloseSessionRequest,
  ContentBlock,
  InitializeRequest,
  InitializeResponse,
  ListSessionsRequest,
  ListSessionsResponse,
  LoadSessionRequest,
  McpServer,
  NewSessionRequest,
  NewSessionResponse,
  PermissionOption,
  PlanEntry,
  PromptRequest,
  PromptResponse,
  RequestPermissionOutcome,
  RequestPermissionRequest,
  RequestPermissionResponse,
  ResumeSessionRequest,
  SessionConfigOption,
  SessionModeState,
  SessionNotification,
  SessionUpdate,
  SetSessionConfigOptionRequest,
  SetSessionModeRequest,
  StopReason,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from "@agentclientprotocol/sdk";
