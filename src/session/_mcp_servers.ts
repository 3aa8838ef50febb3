// This module is browser compatible.
/* The session's MCP servers: the option read (record or legacy array), checked, and split. */

import type { SdkMcpServer } from "../mcp/mcp_server.ts";
import { isRecord } from "../_values.ts";
import type { McpExternalServerConfig, McpServers, McpSetServersResult } from "./mcp_servers.ts";

/** The servers, split by who runs them. */
export interface SplitServers {
  readonly inProcess: readonly SdkMcpServer[];
  readonly external: Readonly<Record<string, McpExternalServerConfig>>;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function isSdkServer(value: unknown): value is SdkMcpServer {
  return isRecord(value) && typeof value.handle === "function" && typeof value.name === "string";
}

function strings(value: unknown, what: string): void {
  if (value === undefined) return;
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === "string")) {
    throw new TypeError(`${what} must be an object of strings`);
  }
}

function checkExternal(name: string, config: unknown): McpExternalServerConfig {
  const what = `Cannot use the MCP server ${name}`;
  if (!isRecord(config)) throw new TypeError(`${what}: expected mcpServer() or a config object`);
  const type = config.type ?? "stdio";
  if (type === "stdio") {
    if (typeof config.command !== "string" || config.command === "") {
      throw new TypeError(`${what}: a stdio server needs a command`);
    }
    if (
      config.args !== undefined &&
      !(Array.isArray(config.args) && config.args.every((a) => typeof a === "string"))
    ) {
      throw new TypeError(`${what}: args must be an array of strings`);
    }
    strings(config.env, `${what}: env`);
  } else if (type === "sse" || type === "http") {
    if (typeof config.url !== "string" || !/^https?:\/\//.test(config.url)) {
      throw new TypeError(`${what}: a ${type} server needs an http(s) url`);
    }
    strings(config.headers, `${what}: headers`);
  } else {
    throw new TypeError(`${what}: type must be "stdio", "sse" or "http", got ${String(type)}`);
  }
  if (config.timeout !== undefined && !(typeof config.timeout === "number" && config.timeout > 0)) {
    throw new RangeError(`${what}: timeout must be a positive number of milliseconds`);
  }
  return config as unknown as McpExternalServerConfig; // every field checked above
}

/**
 * Reads the `mcpServers` option: a record by name (the SDK's shape), or the
 * array of `mcpServer()`s of 0.1 (deprecated).
 *
 * @throws {TypeError} For anything else, a bad name, or an in-process server under another name.
 */
export function splitServers(
  option: McpServers | readonly SdkMcpServer[] | undefined,
): SplitServers {
  if (option === undefined) return { inProcess: [], external: {} };
  const entries: [string, unknown][] = Array.isArray(option)
    ? option.map((server) => [isSdkServer(server) ? server.name : "", server])
    : isRecord(option)
    ? Object.entries(option)
    : [];
  if (!Array.isArray(option) && !isRecord(option)) {
    throw new TypeError("Cannot start a session: mcpServers must be an object of servers by name");
  }
  const inProcess: SdkMcpServer[] = [];
  const external: Record<string, McpExternalServerConfig> = {};
  const seen = new Set<string>();
  for (const [name, server] of entries) {
    if (Array.isArray(option) && !isSdkServer(server)) {
      throw new TypeError(
        "Cannot start a session: mcpServers must hold servers made with mcpServer()",
      );
    }
    if (!NAME.test(name)) {
      throw new TypeError(
        `Cannot use the MCP server ${
          JSON.stringify(name)
        }: names are 1 to 64 letters, digits, "_" or "-"`,
      );
    }
    if (seen.has(name)) {
      throw new TypeError(`Cannot start a session: two MCP servers are named ${name}`);
    }
    seen.add(name);
    if (isSdkServer(server)) {
      if (server.name !== name) {
        throw new TypeError(
          `Cannot use the MCP server ${name}: it was made with mcpServer({ name: ${
            JSON.stringify(server.name)
          } }); use the same name as its key`,
        );
      }
      inProcess.push(server);
    } else {
      external[name] = checkExternal(name, server);
    }
  }
  return { inProcess, external };
}

/** The `servers` field of `mcp_set_servers` for a whole set (it replaces the CLI's). */
export function setServersField(servers: SplitServers): Record<string, unknown> {
  const field: Record<string, unknown> = {};
  for (const server of servers.inProcess) field[server.name] = { type: "sdk", name: server.name };
  for (const [name, config] of Object.entries(servers.external)) field[name] = config;
  return field;
}

/**
 * The whole set a session sets before its first turn, when it has external
 * servers (they go over the control channel, not argv); else undefined.
 */
export function startupServers(servers: SplitServers): McpServers | undefined {
  if (Object.keys(servers.external).length === 0) return undefined;
  const inProcess = Object.fromEntries(servers.inProcess.map((server) => [server.name, server]));
  return { ...inProcess, ...servers.external };
}

/** Reads the CLI's reply to `mcp_set_servers`. */
export function readSetServersResult(reply: Record<string, unknown>): McpSetServersResult {
  const list = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  const errors: Record<string, string> = {};
  if (isRecord(reply.errors)) {
    for (const [name, message] of Object.entries(reply.errors)) errors[name] = String(message);
  }
  return { added: list(reply.added), removed: list(reply.removed), errors };
}
