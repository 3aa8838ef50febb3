/**
 * {@linkcode SessionPool}: many conversations over a few live `claude`
 * processes, with spares for fast first turns, limits, and hibernation with
 * transparent resume.
 *
 * This file is the pool's public face and its slot rules: how an acquire
 * reaches a live session (`#reach`: its own process, a start when it is
 * first in the waiting line and a slot is free, an eviction to make room),
 * idle hibernation, starts and crashes, and the close. Each conversation is
 * one state (`_conversation.ts`: new, starting, live with its idle timer,
 * hibernated with its session id); the waiting line, the spares, the starts
 * and the wait times are parts of their own (`_waiting_line.ts`,
 * `_spare_shelf.ts`, `_launcher.ts`, `_wait_times.ts`).
 *
 * @module
 */

import { abortable, checkMs, deadline } from "../../../src/_deadline.ts";
import { DuplexError } from "../../../src/errors.ts";
import type { DuplexSession } from "../../../src/session/duplex_session.ts";
import { Broadcast } from "../../../src/subscriptions/_broadcast.ts";
import type { Subscription, SubscriptionOptions } from "../../../src/subscriptions/subscription.ts";
import { subprocess } from "../subprocess_transport.ts";
import type { ConversationState, PoolEvent, PoolHealth, StartVia } from "./pool_events.ts";
import {
  type AcquireOptions,
  checkConversation,
  checkPoolOptions,
  conversationOf,
  type PoolSettings,
  type SessionPoolOptions,
} from "./pool_options.ts";
import {
  type Conversation,
  disarmIdle,
  idle,
  type Live,
  NEW,
  type Resting,
  sessionIdOf,
  tally,
  viewOf,
} from "./_conversation.ts";
import { SpareShelf } from "./_spare_shelf.ts";
import { Launcher } from "./_launcher.ts";
import { WaitRing } from "./_wait_times.ts";
import { type Place, WaitingLine } from "./_waiting_line.ts";

// moved to ./pool_events.ts; re-exported until the imports are updated
export type { ConversationState } from "./pool_events.ts";

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
  readonly #closingProcesses = new Set<Promise<unknown>>();
  readonly #line = new WaitingLine();
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
  /** Conversations starting (as many as are in the `starting` state, counted for `#hasRoom`). */
  #starting = 0;
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
    this.#shelf = new SpareShelf(
      { warm: this.#settings.spares, parked: this.#settings.parkedSpares },
      this.#settings.prewarmConcurrency,
      {
        open: (kind, signal) => this.#launcher.openSpare(kind, signal),
        demandStarting: () => this.#starting > 0,
        publish: (event) => this.#publish(event),
        failed: () => this.#counts.spareFailures++,
      },
    );
    this.#launcher = new Launcher(options, this.#settings, options.launch ?? subprocess, {
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
      conversation = { key, options: conversationOf(options), holds: 0, state: NEW };
      this.#conversations.set(key, conversation);
    }
    conversation.holds++;
    disarmIdle(conversation.state);
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
        conversation.holds === 0 && conversation.state.phase === "new" &&
        this.#conversations.get(key) === conversation
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
    return conversation && viewOf(conversation);
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
    const { state } = conversation;
    if (conversation.holds > 0 || state.phase === "starting") {
      throw new DuplexError("invalid_argument", `Cannot forget "${key}": it is held or starting`);
    }
    this.#conversations.delete(key);
    if (state.phase === "live") await this.#hibernate(conversation, state, "idle", false);
  }

  /** Counts of every kind, hand-outs, failures and acquire wait times. */
  get health(): PoolHealth {
    const { busy, starting, hibernated } = tally(this.#conversations.values());
    return {
      live: this.#live.size + starting,
      starting,
      busy,
      closing: this.#closingProcesses.size,
      spares: this.#shelf.count("warm"),
      parked: this.#shelf.count("parked"),
      hibernated,
      waiting: this.#line.length,
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
   * joins the line and only the first in the line may start, so a newcomer, or
   * an acquire that made room by an eviction, never overtakes it.
   */
  async #reach(conversation: Conversation, signal: AbortSignal): Promise<DuplexSession> {
    const place: Place = { wake: undefined };
    try {
      for (;;) {
        if (this.#closed) throw closedError();
        const state = conversation.state;
        if (state.phase === "live") {
          this.#line.leave(place); // no slot needed
          if (state.session.alive) {
            this.#live.delete(conversation.key);
            this.#live.set(conversation.key, conversation);
            return state.session;
          }
          // Ending by itself: its exit handler makes it hibernated, then it resumes.
          await abortable(state.session.waitForExit(), signal);
          continue;
        }
        if (state.phase === "starting") {
          this.#line.leave(place);
          await abortable(state.started, signal);
          continue;
        }
        const standing = this.#line.standing(place);
        const position = standing || this.#line.length + 1;
        if (position === 1 && this.#hasRoom()) {
          this.#line.leave(place);
          this.#start(conversation, state);
          continue;
        }
        // Make room for everyone up to this place (closing processes free theirs soon).
        const evicted = position > this.#unoccupied() && this.#evict() !== undefined;
        if (standing === 0) this.#join(conversation.key, place, !evicted);
        await this.#line.wait(place, signal);
      }
    } finally {
      this.#line.leave(place);
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
      const { state } = conversation;
      if (conversation.holds === 0 && state.phase === "live" && idle(state.session)) {
        return this.#hibernate(conversation, state, "evicted");
      }
    }
    return undefined;
  }

  /* Joins the line; `bounded`: refused beyond maxWaiting (an acquire that evicted waits anyway). */
  #join(key: string, place: Place, bounded: boolean): void {
    if (bounded && this.#line.length >= this.#settings.maxWaiting) {
      this.#counts.exhausted++;
      throw new DuplexError(
        "pool_exhausted",
        `Cannot acquire "${key}": all ${this.#settings.maxLive} live slots are held or ` +
          `busy and ${this.#line.length} acquires already wait (maxWaiting); retry later`,
      );
    }
    this.#publish({ type: "waiting", key, position: this.#line.join(place) });
  }

  #release(conversation: Conversation): void {
    conversation.holds--;
    if (conversation.holds > 0) return;
    if (this.#live.delete(conversation.key)) {
      this.#live.set(conversation.key, conversation); // used until now: the most recent
    }
    this.#armIdle(conversation);
    this.#line.wake();
  }

  #armIdle(conversation: Conversation): void {
    const live = conversation.state;
    if (live.phase !== "live") return;
    disarmIdle(live);
    if (this.#settings.idleMs === Infinity || this.#closed) return;
    live.idleTimer = setTimeout(() => {
      live.idleTimer = undefined;
      if (conversation.holds > 0 || conversation.state !== live) return;
      if (idle(live.session)) void this.#hibernate(conversation, live, "idle");
      else this.#armIdle(conversation); // a turn or a permission still runs: look again later
    }, this.#settings.idleMs);
  }

  /* Leaves the live state for hibernated: the idle timer stops, the slot is freed. */
  #rest(conversation: Conversation, live: Live): string | undefined {
    disarmIdle(live);
    const sessionId = sessionIdOf(live);
    conversation.state = { phase: "hibernated", sessionId };
    this.#live.delete(conversation.key);
    return sessionId;
  }

  /* Closes a conversation's process, keeping its session id; resolves once it has gone. */
  #hibernate(
    conversation: Conversation,
    live: Live,
    reason: "idle" | "evicted",
    report = true,
  ): Promise<unknown> {
    const sessionId = this.#rest(conversation, live);
    const closing = live.session.close().catch(() => {}).finally(() => {
      this.#closingProcesses.delete(closing);
      this.#line.wake();
    });
    this.#closingProcesses.add(closing);
    if (report) {
      this.#counts.hibernations++;
      if (reason === "evicted") this.#counts.evictions++;
      this.#publish({ type: "hibernated", key: conversation.key, sessionId, reason });
    }
    return closing;
  }

  /* Starts a process for a resting conversation; it is `starting` until the start ends. */
  #start(conversation: Conversation, from: Resting): void {
    const started = this.#open(conversation, from);
    started.catch(() => {}); // the acquires that wait for it see its failure
    conversation.state = { phase: "starting", started, from };
  }

  async #open(conversation: Conversation, from: Resting): Promise<DuplexSession> {
    const began = performance.now();
    this.#starting++;
    try {
      const { key, options } = conversation;
      const sessionId = sessionIdOf(from);
      const { session, via } = await this.#launcher.open({ key, options, sessionId });
      if (this.#closed) {
        await session.close();
        throw closedError();
      }
      this.#adopt(conversation, session, sessionId);
      this.#shelf.holdForFirstTurn(session);
      this.#handouts[via]++;
      this.#publish({
        type: "started",
        key,
        via,
        sessionId: session.sessionId ?? sessionId,
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
      conversation.state = from;
      throw error;
    } finally {
      this.#starting--;
      this.#line.wake();
      this.#shelf.fill();
    }
  }

  #adopt(conversation: Conversation, session: DuplexSession, known: string | undefined): void {
    const live: Live = {
      phase: "live",
      session,
      sessionId: session.sessionId ?? known,
      idleTimer: undefined,
    };
    conversation.state = live;
    this.#keys.set(session, conversation.key);
    this.#live.set(conversation.key, conversation);
    if (conversation.holds === 0) this.#armIdle(conversation);
    void session.waitForExit().then((status) => {
      if (conversation.state !== live) return; // hibernated by the pool
      const sessionId = this.#rest(conversation, live);
      if (!this.#closed) {
        this.#counts.crashes++;
        this.#publish({
          type: "crashed",
          key: conversation.key,
          sessionId,
          exit: status.state === "running" ? undefined : status.exit,
        });
      }
      this.#line.wake();
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
    this.#line.wake(); // waiting acquires see the pool closed and reject with `closed`
    this.#stopping.abort(closedError()); // starts and claims in progress stop now
    const ending: Promise<unknown>[] = [this.#shelf.close(), ...this.#closingProcesses];
    for (const { state } of this.#conversations.values()) {
      disarmIdle(state);
      if (state.phase === "live") ending.push(state.session.close());
      if (state.phase === "starting") ending.push(state.started.then((s) => s.close(), () => {}));
    }
    await Promise.allSettled(ending);
    await this.#launcher.removeParkFolder();
    this.#publish({ type: "closed" });
    this.#broadcast.close();
  }
}

function closedError(): DuplexError {
  return new DuplexError("closed", "Cannot acquire: the pool is closed");
}
