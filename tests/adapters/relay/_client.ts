/** A raw WebSocket client of the relay protocol, for the relay tests. */

import { bearerProtocol, decodeOutput, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { parseRelayMessage } from "../../../src/wire/wire_parse.ts";
import { denoRunArgs, fakeOptions, makeTestDir } from "../subprocess/_helpers.ts";
import { type RelayOptions, type RelayServer, serveRelay } from "../../../adapters/relay/mod.ts";
import type { SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { tenantId, TENANTS_FOLDER } from "../../../adapters/relay/_tenancy.ts";

export { makeTestDir };

/** The token the test relays accept. */
export const TOKEN = "test-token-0123456789";

/** One message as received: a text message, or a stdout frame. */
export type Received =
  | { kind: "text"; message: Record<string, unknown> & { t: string } }
  | { kind: "out"; seq: number; text: string };

/** The stand-in CLI that counts its starts (see `_counted_cli.ts`). */
export const COUNTED_CLI: string = decodeURIComponent(
  new URL("./_counted_cli.ts", import.meta.url).pathname,
);

/** The stand-in CLI that keeps a transcript in `$CLAUDE_CONFIG_DIR` (see `_mirror_cli.ts`). */
export const MIRROR_CLI: string = decodeURIComponent(
  new URL("./_mirror_cli.ts", import.meta.url).pathname,
);

/**
 * The subprocess options of a relay's CLI: the mirror stand-in, with the
 * test relays' short grace periods, `cli` laid over them.
 */
export function mirrorCli(cli: SubprocessOptions = {}): SubprocessOptions {
  return {
    binary: Deno.execPath(),
    binaryArgs: denoRunArgs(MIRROR_CLI),
    closeGraceMs: 500,
    terminateGraceMs: 1000,
    hostSignal: "ignore",
    ...cli,
  };
}

/**
 * The subprocess options of a relay's CLI: the counted stand-in, logging
 * its starts to `log`.
 */
export function countedCli(
  log: string,
  env: Record<string, string> = {},
  cli: SubprocessOptions = {},
): SubprocessOptions {
  return fakeOptions({ ...env, RELAY_SPAWN_LOG: log }, {
    binaryArgs: denoRunArgs(COUNTED_CLI),
    closeGraceMs: 500,
    terminateGraceMs: 1000,
    hostSignal: "ignore",
    ...cli,
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `predicate` until it holds, for at most `ms`.
 *
 * @throws {Error} On timeout, naming `what`.
 */
export async function waitFor(what: string, predicate: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await delay(20);
  }
}

/** How many CLIs were started with `countedCli(log)`. */
export async function spawnCount(log: string): Promise<number> {
  try {
    return (await Deno.readTextFile(log)).split("\n").filter((line) => line !== "").length;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return 0;
    throw error;
  }
}

/**
 * The workspace root of an owner's sessions (tenancy `"per-owner"`, the
 * default), made if missing: `spawn.cwd` is resolved inside it.
 *
 * @param root The relay's workspace.
 * @param owner The credential's owner (default: the test token's).
 */
export async function ownerWorkspace(root: string, owner = `token:${TOKEN}`): Promise<string> {
  const work = `${root}/${TENANTS_FOLDER}/${await tenantId(owner)}/work`;
  await Deno.mkdir(work, { recursive: true });
  return work;
}

/** A relay under test, its workspace, and the count of CLIs it started. */
export interface TestRelay {
  readonly relay: RelayServer;
  readonly workspace: string;
  /**
   * How many CLIs the relay started: waits (5 s at most) until `expected`
   * have logged their start, then 300 ms more for any late one, and returns
   * the count (a CLI logs its start a moment after the relay spawned it).
   */
  spawns(expected?: number): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A relay on a fresh workspace running the counted stand-in CLI. Its policy
 * exposes the CLI's pid (the tests check processes are reaped) unless
 * `overrides.policy` says otherwise.
 */
export async function startRelay(
  overrides: Partial<RelayOptions> = {},
  env: Record<string, string> = {},
  cli: SubprocessOptions = {},
): Promise<TestRelay> {
  const workspace = overrides.workspace ?? await makeTestDir();
  const log = `${workspace}.spawns`;
  const relay = serveRelay({
    tokens: [TOKEN],
    workspace,
    cli: countedCli(log, env, cli),
    ...overrides,
    policy: { exposePid: true, ...overrides.policy },
  });
  return {
    relay,
    workspace,
    async spawns(expected = 0) {
      const deadline = Date.now() + 5000;
      while (await spawnCount(log) < expected && Date.now() < deadline) await delay(20);
      await delay(300);
      return await spawnCount(log);
    },
    async [Symbol.asyncDispose]() {
      await relay.close();
      await Deno.remove(log).catch(() => {});
      if (overrides.workspace === undefined) await Deno.remove(workspace, { recursive: true });
    },
  };
}

/**
 * Writes `<dir>.cli.sh`, an executable that runs a Deno script as the CLI
 * (for a relay program's `CLAUDE_CLI`).
 *
 * @param dir The path the script's name starts with.
 * @param script The Deno script.
 * @returns The executable's path.
 */
export async function cliScript(dir: string, script: string): Promise<string> {
  const path = `${dir}.cli.sh`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nexec "${Deno.execPath()}" run -A --no-config --quiet "${script}" "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

/** A test client: collects every message, and waits for the ones a test expects. */
export class TestClient {
  readonly socket: WebSocket;
  readonly received: Received[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<CloseEvent>;
  /** Whether it answers the relay's pings, as the protocol asks of a client (a test may stop it). */
  answersPings = true;
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
        if (parsed.message.t === "ping" && this.answersPings) {
          this.send({ t: "pong", at: parsed.message.at });
        }
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

/** A refusal as a client saw it: the error message, then the close. */
export interface SeenRefusal {
  readonly kind: string;
  readonly message: string;
  readonly code: number;
  readonly reason: string;
}

/** How {@linkcode refusalOf} connects and what it sends. */
export interface HostileAttempt {
  /** The bearer token (default: {@linkcode TOKEN}); null for none. */
  readonly token?: string | null;
  /** Request headers (an `Origin`, an `Authorization`). */
  readonly headers?: Record<string, string>;
  /** What to send once open (default: a spawn hello). */
  readonly send?: (client: TestClient) => void;
}

/**
 * Connects as a hostile client would and returns the relay's refusal,
 * checking that exactly one `error` came, no `ready`, and that the close
 * reason is the error's message (cut to the WebSocket limit).
 */
export async function refusalOf(url: string, attempt: HostileAttempt = {}): Promise<SeenRefusal> {
  const token = attempt.token === undefined ? TOKEN : attempt.token;
  const protocols = token === null ? [SUBPROTOCOL] : [SUBPROTOCOL, bearerProtocol(token)];
  const client = new TestClient(url, protocols, attempt.headers);
  await using _ = client;
  await client.opened;
  (attempt.send ?? ((c) => c.send({ t: "hello", v: 1, spawn: {} })))(client);
  const code = await client.closeCode();
  const { reason } = await client.closed;
  const errors = client.texts("error");
  if (errors.length !== 1 || client.texts("ready").length !== 0) {
    throw new Error(`Expected one error and no ready, got ${JSON.stringify(client.received)}`);
  }
  const { kind, message } = errors[0] as { kind: string; message: string };
  if (reason === "" || !message.startsWith(reason)) {
    throw new Error(`The close reason ${JSON.stringify(reason)} is not the message ${message}`);
  }
  return { kind, message, code, reason };
}
