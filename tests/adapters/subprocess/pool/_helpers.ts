/** Helpers of the SessionPool tests: the fake CLI's options and state, an event log, leak checks. */

import assert from "node:assert/strict";
import { subprocess, type SubprocessOptions } from "../../../../adapters/subprocess/mod.ts";
import type { Turn } from "../../../../src/session/turn.ts";
import type { Transport, TransportFactory } from "../../../../src/transport/transport.ts";
import type { PoolEvent } from "../../../../adapters/subprocess/pool/pool_events.ts";
import type { SessionPoolOptions } from "../../../../adapters/subprocess/pool/pool_options.ts";
import { denoRunArgs, killIfAlive, makeTestDir, waitGone } from "../_helpers.ts";

/** Polls a condition until it holds (bounded). */
export { waitUntil as until } from "../../../e2e/_harness.ts";

/** The path of the pool's stand-in CLI. */
export const FAKE_POOL_CLAUDE: string = decodeURIComponent(
  new URL("../../../fixtures/fake_pool_claude.ts", import.meta.url).pathname,
);

/** What one process of the fake wrote when it started. */
export interface FakeStart {
  readonly pid: number;
  readonly cwd: string;
  readonly args: readonly string[];
  /** Its start number in the state folder, from 1. */
  readonly start: number;
}

/** A state folder of the fake (sessions, pids), and a folder to park spares in. */
export class FakeState implements AsyncDisposable {
  /** The state folder (`FAKE_POOL_STATE`). */
  readonly dir: string;
  /** A park folder for the pool (`parkDir`), inside the test folder. */
  readonly parkDir: string;
  /** A second project folder, for claims. */
  readonly other: string;
  /** The pid of each process started through {@linkcode FakeState.launch}, known at spawn. */
  readonly spawned: number[] = [];
  /**
   * The pool's `launch` ({@linkcode fakePool} gives it): records each
   * process's pid at spawn, before the fake writes its own (a process ended
   * early may never write it).
   */
  readonly launch = (options: SubprocessOptions): TransportFactory => {
    const factory = subprocess(options);
    return async (open) => {
      const transport = await factory(open);
      if (transport.info.pid !== undefined) this.spawned.push(transport.info.pid);
      return transport;
    };
  };

  /** Use {@linkcode FakeState.make}. */
  constructor(dir: string) {
    this.dir = `${dir}/state`;
    this.parkDir = `${dir}/park`;
    this.other = `${dir}/other`;
  }

  /** Makes the folders. */
  static async make(): Promise<FakeState> {
    const state = new FakeState(await makeTestDir());
    for (const dir of [state.dir, state.parkDir, state.other]) await Deno.mkdir(dir);
    return state;
  }

  /** Every process the fake started with this state, in start order. */
  async starts(): Promise<FakeStart[]> {
    const found: FakeStart[] = [];
    try {
      for await (const entry of Deno.readDir(`${this.dir}/pids`)) {
        found.push(JSON.parse(await Deno.readTextFile(`${this.dir}/pids/${entry.name}`)));
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return found.sort((a, b) => a.start - b.start);
  }

  /** The user texts a session holds in the fake's state. */
  async turns(sessionId: string): Promise<string[] | undefined> {
    try {
      const file = `${this.dir}/sessions/${sessionId}.json`;
      return JSON.parse(await Deno.readTextFile(file)).turns;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
  }

  /** Every pid known: recorded at spawn, or written by the fake. */
  async #pids(): Promise<number[]> {
    return [...new Set([...this.spawned, ...(await this.starts()).map((start) => start.pid)])];
  }

  /** Asserts that processes were started and every one has gone (within `ms`). */
  async assertAllGone(ms = 3000): Promise<void> {
    const pids = await this.#pids();
    assert.ok(pids.length > 0, "no process was started: nothing to check");
    const alive: number[] = [];
    for (const pid of pids) if (!(await waitGone(pid, ms))) alive.push(pid);
    assert.deepEqual(alive, [], `processes still alive after the pool closed: ${alive}`);
  }

  /** Kills what a failed test left, and removes the folders. */
  async [Symbol.asyncDispose](): Promise<void> {
    for (const pid of await this.#pids()) killIfAlive(pid);
    await Deno.remove(this.dir.slice(0, -"/state".length), { recursive: true });
  }
}

/**
 * The process options that run the fake with a state folder.
 *
 * @param state The fake's state.
 * @param env More `FAKE_POOL_*` variables.
 * @param extra More subprocess options.
 */
export function fakeProcess(
  state: FakeState,
  env: Record<string, string> = {},
  extra: SubprocessOptions = {},
): SubprocessOptions {
  return {
    binary: Deno.execPath(),
    binaryArgs: denoRunArgs(FAKE_POOL_CLAUDE),
    closeGraceMs: 1000,
    terminateGraceMs: 1000,
    cwd: state.dir,
    ...extra,
    extraEnv: { FAKE_POOL_STATE: state.dir, ...env, ...extra.extraEnv },
  };
}

/**
 * Pool options over the fake: its process, a park folder, short timeouts,
 * an event log and the state's `launch`; `options` override them.
 */
export function fakePool(
  state: FakeState,
  log: EventLog,
  options: SessionPoolOptions = {},
): SessionPoolOptions {
  return {
    process: fakeProcess(state),
    parkDir: state.parkDir,
    startTimeoutMs: 10_000,
    acquireTimeoutMs: 15_000,
    onEvent: log.listener,
    launch: state.launch,
    ...options,
  };
}

/** Every event a pool published, through `onEvent`, with waits on them. */
export class EventLog {
  /** The events, in order. */
  readonly events: PoolEvent[] = [];
  readonly #waits = new Set<() => void>();
  /** Give this as `onEvent`. */
  readonly listener = (event: PoolEvent): void => {
    this.events.push(event);
    for (const wake of this.#waits) wake();
  };

  /** The events of one type. */
  of<T extends PoolEvent["type"]>(type: T): Extract<PoolEvent, { type: T }>[] {
    return this.events.filter((event): event is Extract<PoolEvent, { type: T }> =>
      event.type === type
    );
  }

  /** The types in order, for messages. */
  get types(): string[] {
    return this.events.map((event) => event.type);
  }

  /**
   * Waits until `count` events of a type have come (at most `ms`), and returns them.
   *
   * @throws {Error} When they did not come in time.
   */
  async waitFor<T extends PoolEvent["type"]>(
    type: T,
    count = 1,
    ms = 8000,
  ): Promise<Extract<PoolEvent, { type: T }>[]> {
    const limit = Date.now() + ms;
    while (this.of(type).length < count) {
      const left = limit - Date.now();
      if (left <= 0) {
        throw new Error(`Timed out waiting for ${count} ${type} event(s); saw ${this.types}`);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      let wake: (() => void) | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        this.#waits.add(resolve);
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
      this.#waits.delete(wake!);
    }
    return this.of(type);
  }
}

/** Waits `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A `launch` for the pool that counts the fake's processes: from the
 * moment the pool asks for one (spawn) until it has exited and been reaped.
 */
export class CountingLaunch {
  /** Processes asked for and not yet ended. */
  open = 0;
  /** The most open at once. */
  max = 0;
  /** Processes asked for in all. */
  launched = 0;
  /** Give this as `launch`. */
  readonly launch = (options: SubprocessOptions): TransportFactory => {
    const factory = subprocess(options);
    return async (open) => {
      this.launched++;
      this.open++;
      this.max = Math.max(this.max, this.open);
      let transport: Transport;
      try {
        transport = await factory(open);
      } catch (error) {
        this.open--;
        throw error;
      }
      void transport.closed.finally(() => this.open--);
      return transport;
    };
  };
}

/** The `system/init` frame of a turn (the fake's: `session_id`, `cwd`, `model`, `permissionMode`). */
export function initOf(turn: Turn): Record<string, unknown> {
  const init = turn.events.find((event) =>
    event.type === "system" && (event as { subtype?: unknown }).subtype === "init"
  );
  assert.ok(init, `no system/init frame in ${turn.events.map((event) => event.type)}`);
  return init as unknown as Record<string, unknown>;
}
