/**
 * {@linkcode SessionPool}: many conversations over a few live `claude`
 * processes, with spares for fast first turns, limits, and hibernation with
 * transparent resume.
 *
 * The pool's public face (a third of this file is its JSDoc) and the walk
 * of an acquire (`#reach`): its own live process, else a start once it is
 * first in the waiting line and a slot is free, else an eviction to make
 * room; and the starts (`#start`: new or hibernated to starting, then live
 * or back). The rest are parts: one state per conversation
 * (`_conversation.ts`), the live slots with idle timers, hibernation and
 * crashes (`_live_slots.ts`), the waiting line, the spares, the launcher and
 * the report (events, counters, wait times).
 *
 * @module
 */

import { errorOf } from "../../../src/_values.ts";
import { abortable, checkMs, deadline } from "../../../src/_deadline.ts";
import { DuplexError } from "../../../src/errors.ts";
import type { DuplexSession } from "../../../src/session/duplex_session.ts";
import type { Subscription, SubscriptionOptions } from "../../../src/subscriptions/subscription.ts";
import { subprocess } from "../subprocess_transport.ts";
import type { ConversationState, PoolEvent, PoolHealth } from "./pool_events.ts";
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
  NEW,
  type Resting,
  sessionIdOf,
  tally,
  viewOf,
} from "./_conversation.ts";
import { LiveSlots } from "./_live_slots.ts";
import { SpareShelf } from "./_spare_shelf.ts";
import { Launcher } from "./_launcher.ts";
import { PoolReport } from "./_pool_report.ts";
import { type Place, WaitingLine } from "./_waiting_line.ts";

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
 * stderr in the message and `exit`), or `not_found` when the CLI has no
 * transcript of the session id (`No conversation found with session ID`:
 * deleted, or another config folder or `cwd`); `forget(key)` lets the key
 * start over.
 *
 * @example Two conversations, one process at a time
 * ```ts ignore
 * import { SessionPool } from "@duplex/claude/pool";
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
  readonly #settings: PoolSettings;
  readonly #launcher: Launcher;
  readonly #conversations = new Map<string, Conversation>();
  readonly #slots: LiveSlots;
  /** The conversation each session serves (told to the permission handler). */
  readonly #keys = new WeakMap<DuplexSession, string>();
  readonly #line = new WaitingLine();
  readonly #shelf: SpareShelf;
  readonly #report: PoolReport;
  /** Conversations starting (as many as are in the `starting` state; each takes a slot). */
  #starting = 0;
  #closed: Promise<void> | undefined;
  /** Aborts every start and claim in progress when the pool closes. */
  readonly #stopping = new AbortController();

  /**
   * Makes a pool and starts its spares in the background.
   *
   * @param options The shared configuration, limits and spares.
   * @throws {TypeError} For an option of the wrong type.
   * @throws {RangeError} For a count or duration out of range.
   * @throws {DuplexError} `invalid_argument` for a process option the CLI would refuse.
   */
  constructor(options: SessionPoolOptions = {}) {
    this.#settings = checkPoolOptions(options);
    this.#report = new PoolReport(options.onEvent);
    const report = this.#report;
    this.#slots = new LiveSlots(this.#settings, {
      wake: () => this.#line.wake(),
      closed: () => this.#closed !== undefined,
      hibernated: (key, sessionId, reason) => {
        report.count("hibernations");
        if (reason === "evicted") report.count("evictions");
        report.publish({ type: "hibernated", key, sessionId, reason });
      },
      crashed: (key, sessionId, exit) => {
        report.count("crashes");
        report.publish({ type: "crashed", key, sessionId, exit });
      },
    });
    this.#shelf = new SpareShelf(
      { warm: this.#settings.spares, parked: this.#settings.parkedSpares },
      this.#settings.prewarmConcurrency,
      {
        open: (kind, signal) => this.#launcher.openSpare(kind, signal),
        demandStarting: () => this.#starting > 0,
        publish: (event) => report.publish(event),
        failed: () => report.count("spareFailures"),
      },
    );
    this.#launcher = new Launcher(options, this.#settings, options.launch ?? subprocess, {
      shelf: this.#shelf,
      stopping: this.#stopping.signal,
      keyOf: (session) => this.#keys.get(session),
      publish: (event) => report.publish(event),
      count: (counter) => report.count(counter),
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
   *   `timeout`; `resume_failed`; `not_found` (no transcript of the session id to resume);
   *   `closed` once the pool is closed; what a
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
      this.#report.waited(performance.now() - began);
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
    if (state.phase === "live") await this.#slots.hibernate(conversation, state);
  }

  /** Counts of every kind, hand-outs, failures and acquire wait times. */
  get health(): PoolHealth {
    const { busy, starting, hibernated } = tally(this.#conversations.values());
    return this.#report.health({
      live: this.#slots.size + starting,
      starting,
      busy,
      closing: this.#slots.closing.size,
      spares: this.#shelf.count("warm"),
      parked: this.#shelf.count("parked"),
      hibernated,
      waiting: this.#line.length,
    });
  }

  /**
   * Subscribes to the pool's events (bounded, like a session's).
   *
   * @param options Capacity, overflow policy and a signal.
   * @returns The events, from now on.
   */
  subscribe(options: SubscriptionOptions = {}): Subscription<PoolEvent> {
    return this.#report.subscribe(options);
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
            this.#slots.touch(conversation);
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
        if (position === 1 && this.#slots.hasRoom(this.#starting)) {
          this.#line.leave(place);
          this.#start(conversation, state);
          continue;
        }
        // Make room for everyone up to this place (closing processes free theirs soon).
        const evicted = position > this.#slots.unoccupied(this.#starting) &&
          this.#slots.evict() !== undefined;
        if (standing === 0) this.#join(conversation.key, place, !evicted);
        await this.#line.wait(place, signal);
      }
    } finally {
      this.#line.leave(place);
    }
  }

  /* Joins the line; `bounded`: refused beyond maxWaiting (an acquire that evicted waits anyway). */
  #join(key: string, place: Place, bounded: boolean): void {
    if (bounded && this.#line.length >= this.#settings.maxWaiting) {
      this.#report.count("exhausted");
      throw new DuplexError(
        "pool_exhausted",
        `Cannot acquire "${key}": all ${this.#settings.maxLive} live slots are held or ` +
          `busy and ${this.#line.length} acquires already wait (maxWaiting); retry later`,
      );
    }
    this.#report.publish({ type: "waiting", key, position: this.#line.join(place) });
  }

  #release(conversation: Conversation): void {
    conversation.holds--;
    if (conversation.holds > 0) return;
    this.#slots.touch(conversation); // used until now: the most recent
    this.#slots.armIdle(conversation);
    this.#line.wake();
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
      this.#keys.set(session, key);
      this.#slots.adopt(conversation, session, sessionId);
      this.#shelf.holdForFirstTurn(session);
      this.#report.handedOut(via);
      this.#report.publish({
        type: "started",
        key,
        via,
        sessionId: session.sessionId ?? sessionId,
        ms: performance.now() - began,
      });
      return session;
    } catch (error) {
      this.#report.count("failures");
      this.#report.publish({
        type: "start_failed",
        key: conversation.key,
        error: errorOf(error),
      });
      conversation.state = from;
      throw error;
    } finally {
      this.#starting--;
      this.#line.wake();
      this.#shelf.fill();
    }
  }

  async #shutDown(): Promise<void> {
    this.#line.wake(); // waiting acquires see the pool closed and reject with `closed`
    this.#stopping.abort(closedError()); // starts and claims in progress stop now
    const ending: Promise<unknown>[] = [this.#shelf.close(), ...this.#slots.closing];
    for (const { state } of this.#conversations.values()) {
      disarmIdle(state);
      if (state.phase === "live") ending.push(state.session.close());
      if (state.phase === "starting") ending.push(state.started.then((s) => s.close(), () => {}));
    }
    await Promise.allSettled(ending);
    await this.#launcher.removeParkFolder();
    this.#report.publish({ type: "closed" });
    this.#report.close();
  }
}

function closedError(): DuplexError {
  return new DuplexError("closed", "Cannot acquire: the pool is closed");
}
