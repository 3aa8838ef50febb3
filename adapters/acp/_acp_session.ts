/**
 * {@linkcode AcpSession}: what the agent keeps of one ACP session: its folder,
 * the MCP servers the client passed, the mode and model in force, its update
 * mapper, its prompts (one at a time, in order; `cancel` ends the running one
 * and the queued ones), and what each CLI process of it has been told (a
 * process woken from hibernation starts with the first options, so the
 * changes since are sent again).
 *
 * @module
 */

import type { McpServer } from "./_acp.ts";
import type { DuplexSession, McpExternalServerConfig, SessionInfo } from "../../mod.ts";
import type { PermissionMode } from "../../src/protocol/control.ts";
import { UpdateMapper } from "./_updates.ts";

interface Told {
  mode: PermissionMode;
  model: string | undefined;
}

/**
 * The client's MCP servers as the CLI's external server configs.
 *
 * @param servers `mcpServers` of `session/new` / `session/load`.
 * @returns The configs by name.
 */
export function mcpConfigs(servers: readonly McpServer[]): Record<string, McpExternalServerConfig> {
  const configs: Record<string, McpExternalServerConfig> = {};
  for (const server of servers) {
    if ("type" in server && (server.type === "http" || server.type === "sse")) {
      configs[server.name] = {
        type: server.type,
        url: server.url,
        headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])),
      };
    } else if ("command" in server) {
      configs[server.name] = {
        command: server.command,
        args: [...server.args],
        env: Object.fromEntries(server.env.map((e) => [e.name, e.value])),
      };
    }
  }
  return configs;
}

/** One ACP session. */
export class AcpSession {
  /** The ACP session id (the pool's key). */
  readonly id: string;
  /** The session's folder. */
  readonly cwd: string;
  /** Maps its frames to updates. */
  readonly mapper: UpdateMapper;
  /** The mode in force. */
  mode: PermissionMode;
  /** The model in force (`undefined`: the CLI's default). */
  model: string | undefined;
  /** What the CLI said about itself (models, commands), once it started. */
  info: SessionInfo | undefined;
  readonly #mcp: Record<string, McpExternalServerConfig>;
  readonly #first: Told;
  readonly #told = new WeakMap<DuplexSession, Told>();
  readonly #running = new Set<AbortController>();
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * Keeps a session.
   *
   * @param id Its id.
   * @param cwd Its folder.
   * @param options Its MCP servers, first mode and model, and whether the client shows terminals.
   */
  constructor(
    id: string,
    cwd: string,
    options: {
      mcpServers: readonly McpServer[];
      mode: PermissionMode;
      model: string | undefined;
      terminals: boolean;
    },
  ) {
    this.id = id;
    this.cwd = cwd;
    this.mode = options.mode;
    this.model = options.model;
    this.#first = { mode: options.mode, model: options.model };
    this.#mcp = mcpConfigs(options.mcpServers);
    this.mapper = new UpdateMapper({ cwd, terminals: options.terminals });
  }

  /**
   * Tells a process of this session what it has not been told: the MCP
   * servers (once per process), the mode and the model.
   *
   * @param session The live session.
   * @returns Once the CLI confirmed each change.
   */
  async apply(session: DuplexSession): Promise<void> {
    this.info = session.info ?? this.info;
    let told = this.#told.get(session);
    if (!told) {
      if (Object.keys(this.#mcp).length > 0) await session.setMcpServers(this.#mcp);
      told = { ...this.#first };
      this.#told.set(session, told);
    }
    if (told.mode !== this.mode) {
      await session.setPermissionMode(this.mode);
      told.mode = this.mode;
    }
    if (told.model !== this.model && this.model !== undefined) {
      await session.setModel(this.model);
      told.model = this.model;
    }
  }

  /**
   * Records that the CLI of `session` changed its mode itself (leaving plan mode).
   *
   * @param session The live session.
   */
  markApplied(session: DuplexSession): void {
    const told = this.#told.get(session);
    if (told) told.mode = this.mode;
  }

  /**
   * Runs prompts one at a time, in order.
   *
   * @param fn The prompt, given a signal that `cancel` aborts.
   * @returns What `fn` returns.
   */
  serially<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.#running.add(controller);
    const run = this.#tail.then(() => fn(controller.signal)).finally(() => {
      this.#running.delete(controller);
    });
    this.#tail = run.catch(() => {});
    return run;
  }

  /** Cancels the running prompt and the queued ones. */
  cancel(): void {
    for (const controller of this.#running) controller.abort();
  }

  /**
   * Resolves once no prompt runs or waits.
   *
   * @returns Once idle.
   */
  async idle(): Promise<void> {
    await this.#tail;
  }
}
