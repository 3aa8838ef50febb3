/**
 * {@linkcode SessionPool}: many conversations over a few live `claude`
 * processes, with spares for fast first turns, limits, and hibernation with
 * transparent resume.
 *
 * @module
 */

import { abortable, checkMs, deadline } from "../../../src/_deadline.ts";
import { DuplexError } from "../../../src/errors.ts";
import type { DuplexSession } from "../../../src/session/duplex_session.ts";
import { Broadcast } from "../../../src/subscriptions/_broadcast.ts";
import type { Subscription, SubscriptionOptions } from "../../../src/subscriptions/subscription.ts";
import { subprocess } from "../subprocess_transport.ts";
import type { PoolEvent, PoolHealth, StartVia } from "./pool_events.ts";
import {
  type AcquireOptions,
  checkConversation,
  checkPoolOptions,
  conversationOf,
  type ConversationOptions,
  type PoolSettings,
  type SessionPoolOptions,
} from "./pool_options.ts";
import { SpareShelf } from "./_spare_shelf.ts";
import { Launcher } from "./_launcher.ts";
import { WaitRing } from "./_wait_times.ts";

/** What the pool knows of one conversation; a hibernated one holds only this. */
interface Conversation {
  readonly key: string;
  readonly options: ConversationOptions | undefined;
  sessionId: string | undefined;
  /** True once it has had a live process (then, without one, it is hibernated). */
  everLive: boolean;
  session: DuplexSession | undefined;
  starting: Promise<DuplexSession> | undefined;
  holds: number;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
}

/** Where a conversation is, as {@linkcode SessionPool.peek} tells. */
export interface ConversationState {
  /** `live`: a process serves it; `starting`; `hibernated`: known, no process. */
  readonly state: "live" | "starting" | "hibernated";
  /** The CLI's session id, once known. */
  readonly sessionId: string | undefined;
  /** How many holders have acquired it and not released it. */
  readonly holds: number;
  /** True while a turn runs or a permission request waits (never hibernated then). */
  readonly busy: boolean;
}

/** An acquire in the line for a live slot; `wake` makes it look again. */
interface Waiter {
  readonly key: string;
  wake: (() => void) | undefined;
}

/**
 * Many conversations on one host over a few live `claude` processes.
 *
 * - `acquire(key)` resolves with the live {@linkcode DuplexSession} of a
 *   conversation: its own if live, else a new process: a spare for the known
 *   configuration, a parked spare claimed for the conversation's folder, or a
 *   cold start; a hibernated conversation is resumed (`--resume`, same
 *   session id, the model sees the history). `release(key)` ends the hold;
 *   `withSession(key, fn)` does both around `fn`.
 * - At `maxLive` processes, the least recently used idle conversation is
 *   hibernated to make room; a conversation that is held, has a turn in
 *   flight or a permission pending is never hibernated. Beyond `maxWaiting`
 *   waiting acquires, `acquire` rejects with `pool_exhausted`.
 * - A conversation released for `idleMs` is hibernated; a hibernated one
 *   costs no process and a few hundred bytes of memory. A live
 *   conversation whose process dies is resumed by the next `acquire`.
 * - `health` and `subscribe()` report counts and events; `close()` closes
 *   every process of every kind and rejects waiting acquires.
 *
 * Resume needs what the CLI needs: session persistence on (not
 * `persistSession: false`), the same config folder (`CLAUDE_CONFIG_DIR` /
 * `HOME`) and the same folder (`cwd`) as the conversation's first process.
 * When the CLI cannot resume, `acquire` rejects with `resume_failed` (its
 * stderr in the message and `exit`); `forget(key)` lets the key start over.
 *
 * @example Two conversations, one process at a time
 * ```ts ignore
 * import { SessionPool } from "@duplex/claude/subprocess";
 *
 * await using pool = new SessionPool({
 *   process: { cwd: "/srv/project", model: "sonnet" },
 *   maxLive: 1,
 *   spares: 1,
 * });
 * const answer = await pool.withSession("alice", (s) => s.send("Hi, I am Alice."));
 * await pool.withSession("bob", (s) => s.send("Hi, I am Bob.")); // hibernates alice
 * await pool.withSession("alice", (s) => s.send("Who am I?")); // resumes alice
 * ```
 */
export class SessionPool implements AsyncDisposable {
  readonly #options: SessionPoolOptions;
  readonly #settings: PoolSettings;
  readonly #launcher: Launcher;
  readonly #conversations = new Map<string, Conversation>();
  /** Conversations with a live process, least recently used first. */
  readonly #live = new Map<string, Conversation>();
  readonly #keys = new WeakMap<DuplexSession, string>();
  /** Sessions the pool itself is closing (not crashes). */
  readonly #hibernating = new WeakSet<DuplexSession>();
  readonly #closingProcesses = new Set<Promise<unknown>>();
  readonly #waiters: Waiter[] = [];
  readonly #shelf: SpareShelf;
  readonly #broadcast = new Broadcast<PoolEvent>((count) => ({ type: "lagged", count }));
  readonly #waits = new WaitRing();
  readonly #handouts: Record<StartVia, number> = { spare: 0, parked: 0, cold: 0, resumed: 0 };
  readonly #counts = {
    hibernations: 0,
    evictions: 0,
    crashes: 0,
    failures: 0,
    claimRefusals: 0,
    handoutFailures: 0,
    spareFailures: 0,
    exhausted: 0,
  };
  #starting = 0;
  /** Conversations just started whose first turn has not ended (spares wait for them too). */
  #firstTurns = 0;
  #closed: Promise<void> | undefined;
  /** Aborts every start and claim in progress when the pool closes. */
  readonly #stopping = new AbortController();

  /**
   * Makes a pool and starts its spares in the background.
   *
   * @param options The shared configuration, limits and spares.
   * @throws {RangeError} For a count or duration out of range.
   * @throws {DuplexError} `invalid_argument` for a process option the CLI would refuse.
   */
  constructor(options: SessionPoolOptions = {}) {
    this.#settings = checkPoolOptions(options);
    this.#options = options;
    const launch = options.launch ?? subprocess;
    launch(options.process ?? {}); // checks the options now, spawns nothing
    this.#shelf = new SpareShelf(
      { warm: this.#settings.spares, parked: this.#settings.parkedSpares },
      this.#settings.prewarmConcurrency,
      {
        open: (kind, signal) => this.#launcher.openSpare(kind, signal),
        demandStarting: () => this.#starting > 0 || this.#firstTurns > 0,
        publish: (event) => this.#publish(event),
        failed: () => this.#counts.spareFailures++,
      },
    );
    this.#launcher = new Launcher(options, this.#settings, launch, {
      shelf: this.#shelf,
      stopping: this.#stopping.signal,
      keyOf: (session) => this.#keys.get(session),
      publish: (event) => this.#publish(event),
      count: (counter) => this.#counts[counter]++,
    });
    this.#shelf.fill();
  }

  /**
   * Resolves with the live session of a conversation, starting or resuming
   * its process as needed, and holds it (not hibernated) until `release`.
   *
   * @param key The conversation key (any non-empty string).
   * @param options The conversation's options (used when the pool starts it
   *   new), a signal and a timeout.
   * @returns The conversation's live session.
   * @throws {DuplexError} `pool_exhausted` when the waiting line is full;
   *   `timeout`; `resume_failed`; `closed` once the pool is closed; what a
   *   failed start rejected with (`cli_not_found`, `process_exited`, …).
   *   Rejects with `signal.reason` when the signal aborts.
   */
  async acquire(key: string, options: AcquireOptions = {}): Promise<DuplexSession> {
    if (typeof key !== "string" || key === "") {
      throw new TypeError("Cannot acquire: the key must be a non-empty string");
    }
    checkConversation(options);
    options.signal?.throwIfAborted();
    const timeoutMs = options.timeoutMs === undefined
      ? this.#settings.acquireTimeoutMs
      : checkMs(options.timeoutMs, "Cannot acquire: timeoutMs");
    if (this.#closed) throw closedError();
    const began = performance.now();
    let conversation = this.#conversations.get(key);
    if (!conversation) {
      conversation = {
        key,
        options: conversationOf(options),
        sessionId: undefined,
        everLive: false,
        session: undefined,
        starting: undefined,
        holds: 0,
        idleTimer: undefined,
      };
      this.#conversations.set(key, conversation);
    }
    conversation.holds++;
    clearTimeout(conversation.idleTimer);
    conversation.idleTimer = undefined;
    using limit = deadline(timeoutMs, {
      signal: options.signal,
      reason: () =>
        new DuplexError("timeout", `Cannot acquire "${key}": no session within ${timeoutMs} ms`),
    });
    try {
      const session = await this.#reach(conversation, limit.signal);
      this.#waits.add(performance.now() - began);
      return session;
    } catch (error) {
      this.#release(conversation);
      // A key that never had a process is not kept (it is not a hibernated conversation).
      if (
        conversation.holds === 0 && !conversation.session && !conversation.starting &&
        !conversation.everLive && this.#conversations.get(key) === conversation
      ) {
        this.#conversations.delete(key);
      }
      throw error;
    }
  }

  /**
   * Ends one hold of a conversation; once no holder is left it may be
   * hibernated (after `idleMs`, or to make room). An unknown key, or one not
   * held, is a no-op.
   *
   * @param key The conversation key.
   */
  release(key: string): void {
    const conversation = this.#conversations.get(key);
    if (conversation && conversation.holds > 0) this.#release(conversation);
  }

  /**
   * Acquires a conversation, runs `fn` with its session, and releases it.
   *
   * @param key The conversation key.
   * @param fn What to do with the session.
   * @param options As for {@linkcode SessionPool.acquire}.
   * @returns What `fn` returns.
   */
  async withSession<T>(
    key: string,
    fn: (session: DuplexSession) => T | Promise<T>,
    options: AcquireOptions = {},
  ): Promise<T> {
    const session = await this.acquire(key, options);
    try {
      return await fn(session);
    } finally {
      this.release(key);
    }
  }

  /**
   * Tells where a conversation is, without acquiring it.
   *
   * @param key The conversation key.
   * @returns Its state, or `undefined` when the pool does not know it.
   */
  peek(key: string): ConversationState | undefined {
    const conversation = this.#conversations.get(key);
    if (!conversation) return undefined;
    const session = conversation.session;
    return {
      state: session ? "live" : conversation.starting ? "starting" : "hibernated",
      sessionId: session?.sessionId ?? conversation.sessionId,
      holds: conversation.holds,
      busy: session !== undefined && !idle(session),
    };
  }

  /**
   * Forgets a conversation that nobody holds: closes its process if it has
   * one, and drops what the pool knew (the next `acquire` starts it new; its
   * transcript stays on disk).
   *
   * @param key The conversation key.
   * @throws {DuplexError} `invalid_argument` while it is held or starting.
   */
  async forget(key: string): Promise<void> {
    const conversation = this.#conversations.get(key);
    if (!conversation) return;
    if (conversation.holds > 0 || conversation.starting) {
      throw new DuplexError("invalid_argument", `Cannot forget "${key}": it is held or starting`);
    }
    this.#conversations.delete(key);
    clearTimeout(conversation.idleTimer);
    if (conversation.session) await this.#hibernate(conversation, "idle", false);
  }

  /** Counts of every kind, hand-outs, failures and acquire wait times. */
  get health(): PoolHealth {
    let busy = 0;
    for (const { session } of this.#live.values()) if (session && !idle(session)) busy++;
    let starting = 0;
    let hibernated = 0;
    for (const conversation of this.#conversations.values()) {
      if (conversation.session) continue;
      if (conversation.starting) starting++;
      // Waiting for its first process is not hibernated.
      else if (conversation.everLive || conversation.options?.resume) hibernated++;
    }
    return {
      live: this.#live.size + starting,
      starting,
      busy,
      closing: this.#closingProcesses.size,
      spares: this.#shelf.count("warm"),
      parked: this.#shelf.count("parked"),
      hibernated,
      waiting: this.#waiters.length,
      handouts: { ...this.#handouts },
      ...this.#counts,
      acquireWait: this.#waits.read(),
    };
  }

  /**
   * Subscribes to the pool's events (bounded, like a session's).
   *
   * @param options Capacity, overflow policy and a signal.
   * @returns The events, from now on.
   */
  subscribe(options: SubscriptionOptions = {}): Subscription<PoolEvent> {
    return this.#broadcast.subscribe(options);
  }

  /**
   * Closes every process (conversations, spares, parked spares), rejects
   * waiting and later acquires with `closed`, and removes the pool's own
   * parking folder. Idempotent.
   */
  close(): Promise<void> {
    return this.#closed ??= this.#shutDown();
  }

  /** Same as {@linkcode SessionPool.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /*
   * Acquires that need a live slot take it in arrival order: one that must wait
   * joins the line (`#waiters`) and only the first in the line may start, so a
   * newcomer, or an acquire that made room by an eviction, never overtakes it.
   */
  async #reach(conversation: Conversation, signal: AbortSignal): Promise<DuplexSession> {
    const place: Waiter = { key: conversation.key, wake: undefined };
    try {
      for (;;) {
        if (this.#closed) throw closedError();
        const session = conversation.session;
        if (session || conversation.starting) this.#leave(place); // no slot needed
        if (session?.alive) {
          this.#live.delete(conversation.key);
          this.#live.set(conversation.key, conversation);
          return session;
        }
        if (session) {
          // Ending by itself: its exit handler clears it, then this conversation resumes.
          await abortable(session.waitForExit(), signal);
          continue;
        }
        if (conversation.starting) {
          await abortable(conversation.starting, signal);
          continue;
        }
        const at = this.#waiters.indexOf(place);
        const position = at < 0 ? this.#waiters.length + 1 : at + 1;
        if (position === 1 && this.#hasRoom()) {
          this.#leave(place);
          const starting = this.#start(conversation);
          conversation.starting = starting;
          starting.catch(() => {}).finally(() => {
            if (conversation.starting === starting) conversation.starting = undefined;
          });
          continue;
        }
        // Make room for everyone up to this place (closing processes free theirs soon).
        const evicted = position > this.#unoccupied() && this.#evict() !== undefined;
        if (at < 0) this.#join(place, !evicted);
        await this.#wait(place, signal);
      }
    } finally {
      this.#leave(place);
    }
  }

  #hasRoom(): boolean {
    return this.#live.size + this.#starting + this.#closingProcesses.size < this.#settings.maxLive;
  }

  /* Slots neither live nor starting: free now, or once their process has closed. */
  #unoccupied(): number {
    return this.#settings.maxLive - this.#live.size - this.#starting;
  }

  /* Hibernates the least recently used idle conversation; `undefined` when none is. */
  #evict(): Promise<unknown> | undefined {
    for (const conversation of this.#live.values()) {
      const session = conversation.session;
      if (conversation.holds === 0 && session && idle(session)) {
        return this.#hibernate(conversation, "evicted");
      }
    }
    return undefined;
  }

  /* Joins the line; `bounded`: refused beyond maxWaiting (an acquire that evicted waits anyway). */
  #join(place: Waiter, bounded: boolean): void {
    if (bounded && this.#waiters.length >= this.#settings.maxWaiting) {
      this.#counts.exhausted++;
      throw new DuplexError(
        "pool_exhausted",
        `Cannot acquire "${place.key}": all ${this.#settings.maxLive} live slots are held or ` +
          `busy and ${this.#waiters.length} acquires already wait (maxWaiting); retry later`,
      );
    }
    this.#waiters.push(place);
    this.#publish({ type: "waiting", key: place.key, position: this.#waiters.length });
  }

  #leave(place: Waiter): void {
    const at = this.#waiters.indexOf(place);
    if (at < 0) return;
    this.#waiters.splice(at, 1);
    if (at === 0) this.#wake(); // the next one may be able to start now
  }

  async #wait(place: Waiter, signal: AbortSignal): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    place.wake = resolve;
    await abortable(promise, signal);
  }

  /* Room may have been made: every waiter looks again, in arrival order. */
  #wake(): void {
    for (const waiter of this.#waiters) {
      waiter.wake?.();
      waiter.wake = undefined;
    }
  }

  #release(conversation: Conversation): void {
    conversation.holds--;
    if (conversation.holds > 0) return;
    if (this.#live.delete(conversation.key)) {
      this.#live.set(conversation.key, conversation); // used until now: the most recent
    }
    this.#armIdle(conversation);
    this.#wake();
  }

  #armIdle(conversation: Conversation): void {
    clearTimeout(conversation.idleTimer);
    conversation.idleTimer = undefined;
    if (!conversation.session || this.#settings.idleMs === Infinity || this.#closed) return;
    conversation.idleTimer = setTimeout(() => {
      conversation.idleTimer = undefined;
      const session = conversation.session;
      if (conversation.holds > 0 || !session) return;
      if (idle(session)) void this.#hibernate(conversation, "idle");
      else this.#armIdle(conversation); // a turn or a permission still runs: look again later
    }, this.#settings.idleMs);
  }

  /* Closes a conversation's process, keeping its session id; resolves once it has gone. */
  #hibernate(
    conversation: Conversation,
    reason: "idle" | "evicted",
    report = true,
  ): Promise<unknown> {
    const session = conversation.session!;
    clearTimeout(conversation.idleTimer);
    conversation.idleTimer = undefined;
    this.#hibernating.add(session);
    conversation.sessionId = session.sessionId ?? conversation.sessionId;
    conversation.session = undefined;
    this.#live.delete(conversation.key);
    const closing = session.close().catch(() => {}).finally(() => {
      this.#closingProcesses.delete(closing);
      this.#wake();
    });
    this.#closingProcesses.add(closing);
    if (report) {
      this.#counts.hibernations++;
      if (reason === "evicted") this.#counts.evictions++;
      this.#publish({
        type: "hibernated",
        key: conversation.key,
        sessionId: conversation.sessionId,
        reason,
      });
    }
    return closing;
  }

  async #start(conversation: Conversation): Promise<DuplexSession> {
    const began = performance.now();
    this.#starting++;
    try {
      const { session, via } = await this.#launcher.open(conversation);
      if (this.#closed) {
        await session.close();
        throw closedError();
      }
      this.#adopt(conversation, session);
      this.#holdPrewarm(session);
      this.#handouts[via]++;
      this.#publish({
        type: "started",
        key: conversation.key,
        via,
        sessionId: session.sessionId ?? conversation.sessionId,
        ms: performance.now() - began,
      });
      return session;
    } catch (error) {
      this.#counts.failures++;
      this.#publish({
        type: "start_failed",
        key: conversation.key,
        error: error instanceof Error ? error : new Error(String(error)),
      });
      throw error;
    } finally {
      this.#starting--;
      this.#wake();
      this.#shelf.fill();
    }
  }

  /*
   * Spares are not started during a new conversation's first turn (the CLI's
   * heaviest: a spawn beside it on 2 cores made it ~30 % slower, median of
   * five runs of bench row 8f), nor longer than FIRST_TURN_HOLD_MS.
   */
  #holdPrewarm(session: DuplexSession): void {
    this.#firstTurns++;
    const events = session.subscribe({ capacity: 64 });
    const hold = setTimeout(() => void events.return(), FIRST_TURN_HOLD_MS);
    void (async () => {
      try {
        for await (const event of events) {
          if (event.type === "result" || event.type === "exit") break;
        }
      } catch {
        // A lagged subscriber: the turn is under way anyway.
      } finally {
        clearTimeout(hold);
        this.#firstTurns--;
        this.#shelf.fill();
      }
    })();
  }

  #adopt(conversation: Conversation, session: DuplexSession): void {
    conversation.session = session;
    conversation.everLive = true;
    conversation.sessionId = session.sessionId ?? conversation.sessionId;
    this.#keys.set(session, conversation.key);
    this.#live.set(conversation.key, conversation);
    if (conversation.holds === 0) this.#armIdle(conversation);
    void session.waitForExit().then((status) => {
      if (conversation.session !== session) return; // hibernated, or replaced
      conversation.session = undefined;
      conversation.sessionId = session.sessionId ?? conversation.sessionId;
      this.#live.delete(conversation.key);
      clearTimeout(conversation.idleTimer);
      conversation.idleTimer = undefined;
      if (!this.#hibernating.has(session) && !this.#closed) {
        this.#counts.crashes++;
        this.#publish({
          type: "crashed",
          key: conversation.key,
          sessionId: conversation.sessionId,
          exit: status.state === "running" ? undefined : status.exit,
        });
      }
      this.#wake();
    });
  }

  #publish(event: PoolEvent): void {
    this.#broadcast.publish(event);
    try {
      this.#options.onEvent?.(event);
    } catch {
      // A throwing listener must not break the pool.
    }
  }

  async #shutDown(): Promise<void> {
    this.#wake(); // waiting acquires see the pool closed and reject with `closed`
    this.#stopping.abort(closedError()); // starts and claims in progress stop now
    const ending: Promise<unknown>[] = [this.#shelf.close(), ...this.#closingProcesses];
    for (const conversation of this.#conversations.values()) {
      clearTimeout(conversation.idleTimer);
      conversation.idleTimer = undefined;
      const { session, starting } = conversation;
      if (session) {
        this.#hibernating.add(session);
        ending.push(session.close());
      }
      if (starting) ending.push(starting.then((s) => s.close(), () => {}));
    }
    await Promise.allSettled(ending);
    await this.#launcher.removeParkFolder();
    this.#publish({ type: "closed" });
    this.#broadcast.close();
  }
}

/** The longest spares wait for a new conversation's first turn to end. */
const FIRST_TURN_HOLD_MS = 5000;

/** True when a session may be hibernated: no turn running, no permission waiting. */
function idle(session: DuplexSession): boolean {
  return !session.busy && session.pendingPermissions.length === 0;
}

function closedError(): DuplexError {
  return new DuplexError("closed", "Cannot acquire: the pool is closed");
}
