/**
 * A scriptable relay for the remote transport's unit tests: it speaks the
 * wire protocol on 127.0.0.1 and lets each test decide what to answer.
 *
 * @module
 */

import {
  encodeOutput,
  type RelayMessage,
  SUBPROTOCOL,
  tokenFromProtocol,
} from "../../../src/wire/wire.ts";
import { parseClientFrame } from "../../../src/wire/wire_parse.ts";
import { remote, type RemoteOptions } from "../../../adapters/remote/mod.ts";
import type { Transport } from "../../../src/transport/transport.ts";

export const TOKEN = "test-token";

/** One accepted connection, as the test sees it. */
export class Connection {
  readonly socket: WebSocket;
  readonly token: string | undefined;
  readonly received: Record<string, unknown>[] = [];
  /** Every text frame as received (a batch is one frame). */
  readonly frames: string[] = [];
  readonly #waiters: {
    match: (m: Record<string, unknown>) => boolean;
    resolve: (m: Record<string, unknown>) => void;
  }[] = [];
  readonly opened: Promise<void>;
  readonly closedCode: Promise<number>;

  constructor(socket: WebSocket, token: string | undefined) {
    this.socket = socket;
    this.token = token;
    this.opened = new Promise((resolve) => socket.addEventListener("open", () => resolve()));
    this.closedCode = new Promise((resolve) =>
      socket.addEventListener("close", (event) => resolve(event.code))
    );
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") return;
      this.frames.push(event.data);
      // A frame holds one message or a batch (an array of them), checked as the relay does.
      const parsed = parseClientFrame(event.data);
      if (!parsed.ok) throw new Error(`The client sent a bad frame: ${parsed.reason}`);
      for (const message of parsed.message) this.#take(message);
    });
  }

  #take(message: Record<string, unknown>): void {
    {
      const waiter = this.#waiters.find((w) => w.match(message));
      if (waiter) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      } else {
        this.received.push(message);
      }
    }
  }

  /** The first message received (or to be received) of type `t` (and matching `where`). */
  next(
    t: string,
    where: (m: Record<string, unknown>) => boolean = () => true,
  ): Promise<Record<string, unknown>> {
    const match = (m: Record<string, unknown>): boolean => m.t === t && where(m);
    const seen = this.received.find(match);
    if (seen) {
      this.received.splice(this.received.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  send(message: RelayMessage): void {
    this.socket.send(JSON.stringify(message));
  }

  /** Sends a text frame as it is (for messages a relay should not send). */
  sendRaw(text: string): void {
    this.socket.send(text);
  }

  output(seq: number, text: string): void {
    this.socket.send(encodeOutput(seq, new TextEncoder().encode(text)));
  }

  close(code = 1000): void {
    this.socket.close(code);
  }
}

/** A request the fake relay got: an upgrade, or a plain one. */
export interface SeenRequest {
  readonly method: string;
  readonly upgrade: boolean;
  readonly authorization: string | null;
}

/** Options of {@linkcode FakeRelay}. */
export interface FakeRelayOptions {
  /** The subprotocol it picks (default: `duplex-claude.v1` when offered). */
  readonly protocol?: string;
  /**
   * Answers a request instead of upgrading it, when it returns a response
   * (a relay that refuses before the upgrade, with HTTP 401 / 403).
   */
  readonly answer?: (request: Request) => Response | undefined;
}

/** A fake relay: each accepted connection is handed to `onConnection`. */
export class FakeRelay {
  readonly url: string;
  readonly connections: Connection[] = [];
  /** Every request, in order (upgrades, and the plain ones a refused client makes). */
  readonly requests: SeenRequest[] = [];
  readonly #server: Deno.HttpServer;
  #waiting: ((connection: Connection) => void)[] = [];
  readonly #unclaimed: Connection[] = [];

  constructor(options: FakeRelayOptions = {}) {
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
      this.requests.push({
        method: request.method,
        upgrade: request.headers.get("upgrade")?.toLowerCase() === "websocket",
        authorization: request.headers.get("authorization"),
      });
      const answer = options.answer?.(request);
      if (answer !== undefined) return answer;
      const offered = (request.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) =>
        p.trim()
      );
      const token = offered.map(tokenFromProtocol).find((t) => t !== undefined);
      const { socket, response } = Deno.upgradeWebSocket(request, {
        protocol: options.protocol ?? (offered.includes(SUBPROTOCOL) ? SUBPROTOCOL : ""),
      });
      const connection = new Connection(socket, token);
      this.connections.push(connection);
      const waiter = this.#waiting.shift();
      if (waiter) waiter(connection);
      else this.#unclaimed.push(connection);
      return response;
    });
    this.url = `ws://127.0.0.1:${(this.#server.addr as Deno.NetAddr).port}/v1`;
  }

  /** The next connection (or one already accepted and not yet taken). */
  accept(): Promise<Connection> {
    const unclaimed = this.#unclaimed.shift();
    if (unclaimed) return Promise.resolve(unclaimed);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  async close(): Promise<void> {
    for (const connection of this.connections) {
      try {
        connection.socket.close(1001);
      } catch { /* closed */ }
    }
    await this.#server.shutdown();
  }
}

/** Answers a hello with ready, as a relay that spawned a process. */
export async function handshake(
  connection: Connection,
  session = "s-1",
  inSeq = 0,
): Promise<Record<string, unknown>> {
  const hello = await connection.next("hello");
  connection.send({
    t: "ready",
    session,
    resumed: hello.resume !== undefined,
    inSeq,
    graceMs: 1000,
  });
  return hello;
}

/**
 * Settles like `promise`, or rejects after `ms` naming `what` (a hang fails the test in time).
 */
export async function within<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens a remote transport to the fake relay, with quick bounds (each overridable). */
export function openRemote(
  relay: FakeRelay,
  options: Partial<RemoteOptions> = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<Transport> {
  return remote({
    url: relay.url,
    token: TOKEN,
    connectTimeoutMs: 2_000,
    reconnect: { attempts: 3, initialDelayMs: 10, maxDelayMs: 50 },
    closeTimeoutMs: 1_000,
    ...options,
  })({ signal });
}

/** Opens a remote transport and answers its hello. */
export async function connect(
  relay: FakeRelay,
  options: Partial<RemoteOptions> = {},
): Promise<{ transport: Transport; connection: Connection }> {
  const opening = openRemote(relay, options);
  const connection = await within(relay.accept(), "the connection");
  await handshake(connection);
  return { transport: await within(opening, "the transport"), connection };
}

/** Runs `fn` with a fake relay, closed after it. */
export async function withRelay(fn: (relay: FakeRelay) => Promise<void>): Promise<void> {
  const relay = new FakeRelay();
  try {
    await fn(relay);
  } finally {
    await relay.close();
  }
}

/** What `promise` rejects with (within the bound), or undefined when it resolves. */
export function rejection(promise: Promise<unknown>, what = "the failure"): Promise<unknown> {
  return within(promise.then(() => undefined, (error: unknown) => error), what);
}
