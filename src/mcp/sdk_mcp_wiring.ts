// This module is browser compatible.
/**
 * How a session declares in-process MCP servers to the CLI and routes the
 * CLI's `mcp_message` control requests to them. Pure helpers; the session
 * does the I/O.
 *
 * Verified against Claude Code 2.1.332 (offline, fake Messages API):
 *
 * 1. Declare: `initialize` with `sdkMcpServers: ["<name>", …]` is enough; no
 *    `--mcp-config` is needed ({@linkcode mcpConfigFor} returns `undefined`).
 *    Passing `--mcp-config '{"mcpServers":{"<name>":{"type":"sdk","name":"<name>"}}}'`
 *    (what the Python SDK does) works too, alone or with the `initialize`
 *    field (the CLI then connects once); it also works with
 *    `--strict-mcp-config`. `initialize.mcpServers` with `type: "sdk"` does
 *    NOT work (the server is ignored).
 * 2. The CLI sends `mcp_message` control requests
 *    `{subtype:"mcp_message", server_name, message}`. The first one (MCP
 *    `initialize`, id 0) arrives ~0.6 s after spawn, before the CLI answers
 *    the host's `initialize`, which does NOT wait for it; the first turn
 *    (`system/init`) does wait for the handshake. So the session must answer
 *    `mcp_message` while its own `initialize` is pending. Then
 *    `notifications/initialized`, then `tools/list` (id 1), all before the
 *    first turn starts; `tools/call` (ids 2, 3, …) when the model calls
 *    `mcp__<server>__<tool>`, with `params._meta["claudecode/toolUseId"]`.
 * 3. Reply: a success control response whose payload is
 *    `{mcp_response: <JSON-RPC response>}`. Notifications must ALSO get a
 *    success reply (any `mcp_response`, even none, is accepted); an error
 *    control response to `notifications/initialized` makes the server fail
 *    to connect (its tools are then missing).
 * 4. Permission: the CLI asks `can_use_tool` (with
 *    `mcp_server: {name, source: "sdk"}`) BEFORE `tools/call`, even for a
 *    `readOnlyHint` tool, unless an allow rule (for example
 *    `--allowedTools mcp__<server>__<tool>`) covers it.
 * 5. What the model sees: the text blocks (a `resource_link` as
 *    `[Resource link: <name>] <uri>`), or `JSON.stringify(structuredContent)`
 *    instead when that is present; `isError: true` gives an error tool_result
 *    (the CLI may append a hint about the tool's schema); a JSON-RPC error
 *    response gives an error tool_result with the error's message.
 * 6. Interrupt during `tools/call`: the CLI sends `mcp_message`
 *    `notifications/cancelled` `{requestId: <the call's id>}` (no
 *    `control_cancel_request` for the pending `mcp_message`); the server
 *    aborts that handler's signal. A late reply to the call is ignored.
 *
 * @module
 */

import { isRecord, messageOf } from "../_values.ts";
import { JSON_RPC_ERRORS, type JsonRpcResponse, type SdkMcpServer } from "./mcp_server.ts";

/** The body of an `mcp_message` control request from the CLI. */
export interface McpMessageRequest {
  /** The SDK MCP server the message is for. */
  "server_name": string;
  /** The MCP JSON-RPC message. */
  message: unknown;
  /** Other fields (`subtype`, …) are ignored. */
  [field: string]: unknown;
}

/** The success payload of the control response to an `mcp_message`. */
export interface McpMessageReply {
  /** The JSON-RPC response (for a notification, an empty result). */
  "mcp_response": JsonRpcResponse | { jsonrpc: "2.0"; result: Record<string, never> };
}

function checkNames(servers: readonly SdkMcpServer[]): string[] {
  if (!Array.isArray(servers)) {
    throw new TypeError("Cannot declare the MCP servers: expected an array of mcpServer()s");
  }
  const names: string[] = [];
  for (const server of servers) {
    if (
      !isRecord(server) || typeof server.name !== "string" || typeof server.handle !== "function"
    ) {
      throw new TypeError("Cannot declare the MCP servers: each must come from mcpServer()");
    }
    if (names.includes(server.name)) {
      throw new TypeError(
        `Cannot declare the MCP servers: two are named ${server.name}; names must be unique`,
      );
    }
    names.push(server.name);
  }
  return names;
}

/**
 * The fields to merge into the `initialize` control request so that the CLI
 * connects to the servers.
 *
 * @param servers The in-process servers.
 * @returns `{ sdkMcpServers: [names] }`, or `{}` when there are none.
 * @throws {TypeError} When two servers share a name or one is not a server.
 */
export function initializeFieldsFor(servers: readonly SdkMcpServer[]): Record<string, unknown> {
  const names = checkNames(servers);
  return names.length === 0 ? {} : { sdkMcpServers: names };
}

/**
 * What must go into `--mcp-config` for the servers: nothing, with Claude Code
 * 2.1.332 (the `initialize` field suffices; see the module doc). Kept so that
 * a CLI version that needs it changes one place: a subprocess adapter merges
 * a returned object's `mcpServers` into its own `--mcp-config`.
 *
 * @param servers The in-process servers.
 * @returns `undefined`.
 * @throws {TypeError} When two servers share a name or one is not a server.
 */
export function mcpConfigFor(
  servers: readonly SdkMcpServer[],
): Record<string, unknown> | undefined {
  checkNames(servers);
  return undefined;
}

/**
 * Answers an `mcp_message` control request: routes the message to the server
 * it names and wraps the JSON-RPC response. Never rejects: an unknown server
 * or a malformed request gets a JSON-RPC error response, and a notification
 * gets an empty result (the CLI needs a success reply to every
 * `mcp_message`).
 *
 * @param servers The in-process servers.
 * @param request The control request's body (`server_name`, `message`).
 * @param signal Aborts running tool handlers (for example when the session closes).
 * @returns The success payload of the control response.
 */
export async function answerMcpMessage(
  servers: readonly SdkMcpServer[],
  request: McpMessageRequest,
  signal: AbortSignal,
): Promise<McpMessageReply> {
  const message = isRecord(request) ? request.message : undefined;
  const rawId = isRecord(message) ? message.id : undefined;
  const id = typeof rawId === "string" || typeof rawId === "number" ? rawId : null;
  const serverName = isRecord(request) ? request.server_name : undefined;
  const server = Array.isArray(servers)
    ? servers.find((s) => isRecord(s) && s.name === serverName)
    : undefined;
  if (server === undefined) {
    return {
      mcp_response: {
        jsonrpc: "2.0",
        id,
        error: {
          code: JSON_RPC_ERRORS.methodNotFound,
          message: `Cannot route the MCP message: no in-process MCP server is named ${
            JSON.stringify(serverName)
          }`,
        },
      },
    };
  }
  try {
    const response = await server.handle(message, { signal });
    return { mcp_response: response ?? { jsonrpc: "2.0", result: {} } };
  } catch (error) {
    return {
      mcp_response: {
        jsonrpc: "2.0",
        id,
        error: {
          code: JSON_RPC_ERRORS.internalError,
          message: `Internal error: ${messageOf(error)}`,
        },
      },
    };
  }
}
