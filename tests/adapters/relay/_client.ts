/** A raw WebSocket client of the relay protocol, for the relay tests. */

import { bearerProtocol, decodeOutput, SUBPROTOCOL } from "../../../src/remote/wire.ts";
import { parseRelayMessage } from "../../../src/remote/wire_parse.ts";
import { fakeOptions, makeTestDir } from "../subprocess/_helpers.ts";
import { type RelayOptions, type RelayServer, serveRelay } from "../../../adapters/relay/mod.ts";
import type { SubprocessOptions } from "../../../adapters/subprocess/mod.ts";

export { makeTestDir };

/** The token the test relays accept. */
export const TOKEN = "test-token-0123456789";

/** One message as received: a text message, or a stdout frame. */
export type Received =
  | { kind: "text"; message: Record<string, unknown> & { t: string } }
  | { kind: "out"; seq: number; text: string };

/** A relay on a fresh workspace running the stand-in CLI. */
export async function startRelay(
  overrides: Partial<RelayOptions> = {},
  env: Record<string, string> = {},
  cli: SubprocessOptions = {},
): Promise<{ relay: RelayServer; workspace: string; [Symbol.asyncDispose](): Promise<void> }> {
  const workspace = overrides.workspace ?? await makeTestDir();
  const relay = serveRelay({
    tokens: [TOKEN],
    workspace,
    cli: fakeOptions(env, {
      closeGraceMs: 500,
      terminateGraceMs: 1000,
      hostSignal: "ignore",
      ...cli,
    }),
    ...overrides,
  });
  return {
    relay,
    workspace,
    async [Symbol.asyncDispose]() {
      await relay.close();
      if (overrides.workspace === undefined) await Deno.remove(workspace, { recursive: true });
    },
  };
}

/** A test client: collects every message, and waits for the ones a test expects. */
export class TestClient {
  readonly socket: WebSocket;
  readonly received: Received[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<CloseEvent>;
  #waiters: (() => void)[] = [];
  #closeEvent: CloseEvent | undefined;

  /**
   * @param url The relay URL.
   * @param protocols The offered subprotocols (default: the protocol and the test token).
   * @param headers Request headers (a Deno extension of the WebSocket constructor).
   */
  constructor(
    url: string,
    protocols: string[] = [SUBPROTOCOL, bearerProtocol(TOKEN)],
    headers?: Record<string, string>,
  ) {
    this.socket = headers === undefined
      ? new WebSocket(url, protocols)
      : new WebSocket(url, { protocols, headers });
    this.socket.binaryType = "arraybuffer";
    this.opened = new Promise((resolve, reject) => {
      this.socket.addEventListener("open", () => resolve(), { once: true });
      this.socket.addEventListener("error", () => reject(new Error("WebSocket error")), {
        once: true,
      });
    });
    this.opened.catch(() => {});
    this.closed = new Promise((resolve) => {
      this.socket.addEventListener("close", (event) => {
        this.#closeEvent = event;
        resolve(event);
        this.#wake();
      }, { once: true });
    });
    this.socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") {
        const parsed = parseRelayMessage(event.data);
        if (!parsed.ok) throw new Error(`Bad message from relay: ${parsed.reason}: ${event.data}`);
        this.received.push({ kind: "text", message: parsed.message });
      } else {
        const decoded = decodeOutput(new Uint8Array(event.data as ArrayBuffer));
        if (decoded === undefined) throw new Error("Short binary frame");
        this.received.push({
          kind: "out",
          seq: decoded.seq,
          text: new TextDecoder().decode(decoded.bytes),
        });
      }
      this.#wake();
    });
  }

  /** Sends one message as JSON text. */
  send(message: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(message));
  }

  /** Text messages of one type, received so far. */
  texts(t: string): Record<string, unknown>[] {
    return this.received.flatMap((item) =>
      item.kind === "text" && item.message.t === t ? [item.message] : []
    );
  }

  /** The stdout text received so far, in arrival order. */
  stdout(): string {
    return this.received.map((item) => item.kind === "out" ? item.text : "").join("");
  }

  /** Parsed stdout lines received so far. */
  lines(): Record<string, unknown>[] {
    return this.stdout().split("\n").filter((line) => line.trim() !== "").map((line) =>
      JSON.parse(line)
    );
  }

  /** Every output sequence number received (stdout, err, exit), in arrival order. */
  outputSeqs(): number[] {
    return this.received.flatMap((item) => {
      if (item.kind === "out") return [item.seq];
      const t = item.message.t;
      return t === "err" || t === "exit" ? [item.message.seq as number] : [];
    });
  }

  /** The highest output sequence number received, 0 if none. */
  lastSeq(): number {
    return Math.max(0, ...this.outputSeqs());
  }

  /**
   * Waits until `predicate` holds, for at most `ms`.
   *
   * @throws {Error} On timeout, naming `what`.
   */
  async until(what: string, predicate: () => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `Timed out after ${ms} ms waiting for ${what}; received ${
            JSON.stringify(this.received).slice(0, 2000)
          }${this.#closeEvent ? `; closed ${this.#closeEvent.code}` : ""}`,
        );
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
        this.#waiters.push(resolve);
      });
      clearTimeout(timer);
    }
  }

  /** Waits for the first text message of a type and returns it. */
  async next(t: string, ms = 5000): Promise<Record<string, unknown>> {
    await this.until(`a ${t} message`, () => this.texts(t).length > 0, ms);
    return this.texts(t)[0]!;
  }

  /** Waits for the close and returns its code. */
  async closeCode(ms = 5000): Promise<number> {
    await this.until("the close", () => this.#closeEvent !== undefined, ms);
    return this.#closeEvent!.code;
  }

  /** Closes the socket (if open) and waits for the close. */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CONNECTING) await this.opened.catch(() => {});
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close();
    await this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Connects, sends a spawn hello and waits for ready. */
export async function openSession(
  url: string,
  spawn: Record<string, unknown> = {},
): Promise<{ client: TestClient; ready: Record<string, unknown> }> {
  const client = new TestClient(url);
  await client.opened;
  client.send({ t: "hello", v: 1, spawn });
  const ready = await client.next("ready");
  return { client, ready };
}

export { isGone, userLine, waitGone } from "../subprocess/_helpers.ts";
