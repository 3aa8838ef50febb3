// This module is browser compatible.
/**
 * The MCP servers of a session, in the official SDK's shape: a record keyed
 * by name, in-process servers (made with `mcpServer()`) and external ones
 * (a command to run, or a URL) together.
 *
 * External configs reach the CLI over its control channel
 * (`mcp_set_servers`), never on its command line, where `ps` would show their
 * environment and headers to every local user; so they work through the relay
 * too.
 *
 * @module
 */

import type { SdkMcpServer } from "../mcp/mcp_server.ts";
import type { McpSetServersResult } from "../protocol/control_requests.ts";

export type { McpSetServersResult };

/** An MCP server the CLI starts as a process and talks to over its stdin and stdout. */
export interface McpStdioServerConfig {
  /** `"stdio"`, or left out. */
  readonly type?: "stdio";
  /** The program to run. */
  readonly command: string;
  /** Its arguments. */
  readonly args?: readonly string[];
  /** Its environment (on top of the CLI's); secrets are safe here: they never reach argv. */
  readonly env?: Readonly<Record<string, string>>;
  /** Per tool call, in milliseconds (the CLI ignores values below 1000). */
  readonly timeout?: number;
}

/** An MCP server the CLI reaches over HTTP, with server-sent events (`sse`) or streamable HTTP (`http`). */
export interface McpRemoteServerConfig {
  /** The transport. */
  readonly type: "sse" | "http";
  /** The server's URL. */
  readonly url: string;
  /** Request headers (for example `Authorization`); they never reach argv. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per tool call, in milliseconds (the CLI ignores values below 1000). */
  readonly timeout?: number;
}

/** An MCP server the CLI runs or reaches itself. */
export type McpExternalServerConfig = McpStdioServerConfig | McpRemoteServerConfig;

/**
 * The MCP servers of a session by name: in-process servers (`mcpServer()`,
 * whose own name must be the key) and external configs.
 */
export type McpServers = Readonly<Record<string, SdkMcpServer | McpExternalServerConfig>>;
