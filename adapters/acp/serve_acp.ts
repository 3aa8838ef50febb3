/**
 * {@linkcode serveAcp}: an {@linkcode AcpAgent} on a pair of byte streams
 * (stdio for a program an editor launches).
 *
 * @module
 */

import { AcpAgent, type AcpConnection } from "./acp_agent.ts";
import type { AcpAgentOptions } from "./acp_options.ts";

/** Options of {@linkcode serveAcp}: the streams, and the agent's options. */
export interface ServeAcpOptions extends AcpAgentOptions {
  /** What the client writes (the program's stdin). */
  readonly stdin: ReadableStream<Uint8Array>;
  /** Where the agent writes (the program's stdout). */
  readonly stdout: WritableStream<Uint8Array>;
}

/** A served agent. */
export interface ServedAcp extends AsyncDisposable {
  /** The agent. */
  readonly agent: AcpAgent;
  /** The client's connection. */
  readonly connection: AcpConnection;
  /** Resolves once the client went away (stdin ended) and every CLI has ended. */
  readonly closed: Promise<void>;
  /**
   * Ends the connection and every CLI.
   *
   * @returns Once everything has ended.
   */
  close(): Promise<void>;
}

/**
 * Serves one ACP client on newline-delimited JSON-RPC over two byte streams.
 *
 * @param options The streams and the agent's options.
 * @returns The served agent; `closed` resolves when the client is gone.
 *
 * @example Run the agent an editor launches
 * ```ts ignore
 * import { serveAcp } from "@duplex/claude/acp";
 *
 * const served = serveAcp({ stdin: Deno.stdin.readable, stdout: Deno.stdout.writable });
 * await served.closed;
 * ```
 */
export function serveAcp(options: ServeAcpOptions): ServedAcp {
  const { stdin, stdout, ...rest } = options;
  const agent = new AcpAgent(rest);
  const connection = agent.connect({ readable: stdin, writable: stdout });
  const closed = connection.closed.catch(() => {}).then(() => agent.close());
  const close = async (): Promise<void> => {
    connection.close();
    await closed;
  };
  return { agent, connection, closed, close, [Symbol.asyncDispose]: close };
}
