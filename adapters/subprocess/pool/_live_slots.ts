/*
 * The pool's live slots: every move into and out of a conversation's `live`
 * state. A started process is adopted (`adopt`); it leaves by hibernation
 * (`hibernate`: idle for `idleMs`, evicted to make room, or forgotten) or by
 * ending on its own (a crash), and either way the conversation keeps its
 * session id. The slots keep the live conversations least recently used
 * first, the processes still closing, and say how much room is left.
 */

import type { TransportExit } from "../../../src/errors.ts";
import type { DuplexSession } from "../../../src/session/duplex_session.ts";
import { type Conversation, disarmIdle, idle, type Live, sessionIdOf } from "./_conversation.ts";
import type { HibernateReason } from "./pool_events.ts";
import type { PoolSettings } from "./pool_options.ts";

/** What the slots need from the pool. */
export interface SlotsDeps {
  /** Room may have been made: the waiting line looks again. */
  wake(): void;
  /** True once the pool is closing: no idle timer is armed, an exit is no crash. */
  closed(): boolean;
  /** Reports a hibernation. */
  hibernated(key: string, sessionId: string | undefined, reason: HibernateReason): void;
  /** Reports a live conversation whose process ended by itself. */
  crashed(key: string, sessionId: string | undefined, exit: TransportExit | undefined): void;
}

/** The live conversations of a pool and the processes it is closing. */
export class LiveSlots {
  readonly #settings: Pick<PoolSettings, "maxLive" | "idleMs">;
  readonly #deps: SlotsDeps;
  /** Conversations with a live process, least recently used first. */
  readonly #live = new Map<string, Conversation>();
  readonly #closing = new Set<Promise<unknown>>();

  /**
   * @param settings The pool's limit and idle time.
   * @param deps What the slots need from the pool.
   */
  constructor(settings: Pick<PoolSettings, "maxLive" | "idleMs">, deps: SlotsDeps) {
    this.#settings = settings;
    this.#deps = deps;
  }

  /** How many conversations are live. */
  get size(): number {
    return this.#live.size;
  }

  /** The hibernated processes still closing (each frees its slot when it has gone). */
  get closing(): ReadonlySet<Promise<unknown>> {
    return this.#closing;
  }

  /**
   * Tells whether a process may start now.
   *
   * @param starting Conversations starting (each takes a slot).
   * @returns True when live, starting and closing ones leave a slot free.
   */
  hasRoom(starting: number): boolean {
    return this.#live.size + starting + this.#closing.size < this.#settings.maxLive;
  }

  /**
   * Slots neither live nor starting: free now, or once their process has closed.
   *
   * @param starting Conversations starting.
   * @returns The count.
   */
  unoccupied(starting: number): number {
    return this.#settings.maxLive - this.#live.size - starting;
  }

  /**
   * Marks a live conversation used now (the most recent); any other: nothing.
   *
   * @param conversation The conversation.
   */
  touch(conversation: Conversation): void {
    if (this.#live.delete(conversation.key)) this.#live.set(conversation.key, conversation);
  }

  /**
   * Makes a conversation live on a started process, and watches the process:
   * one that ends while it still serves the conversation is a crash.
   *
   * @param conversation The conversation (starting).
   * @param session Its process's session.
   * @param known The session id known before this process.
   */
  adopt(conversation: Conversation, session: DuplexSession, known: string | undefined): void {
    const live: Live = {
      phase: "live",
      session,
      sessionId: session.sessionId ?? known,
      idleTimer: undefined,
    };
    conversation.state = live;
    this.#live.set(conversation.key, conversation);
    if (conversation.holds === 0) this.armIdle(conversation);
    void session.waitForExit().then((status) => {
      if (conversation.state !== live) return; // hibernated by the pool
      const sessionId = this.#rest(conversation, live);
      if (!this.#deps.closed()) {
        this.#deps.crashed(
          conversation.key,
          sessionId,
          status.state === "running" ? undefined : status.exit,
        );
      }
      this.#deps.wake();
    });
  }

  /**
   * Hibernates a live conversation once nobody holds it for `idleMs`
   * (again later while a turn or a permission still runs); any other: nothing.
   *
   * @param conversation The conversation.
   */
  armIdle(conversation: Conversation): void {
    const live = conversation.state;
    if (live.phase !== "live") return;
    disarmIdle(live);
    if (this.#settings.idleMs === Infinity || this.#deps.closed()) return;
    live.idleTimer = setTimeout(() => {
      live.idleTimer = undefined;
      if (conversation.holds > 0 || conversation.state !== live) return;
      if (idle(live.session)) void this.hibernate(conversation, live, "idle");
      else this.armIdle(conversation);
    }, this.#settings.idleMs);
  }

  /**
   * Hibernates the least recently used idle conversation (nobody holds it,
   * no turn, no permission waiting).
   *
   * @returns Its process's closing, or `undefined` when none is idle.
   */
  evict(): Promise<unknown> | undefined {
    for (const conversation of this.#live.values()) {
      const { state } = conversation;
      if (conversation.holds === 0 && state.phase === "live" && idle(state.session)) {
        return this.hibernate(conversation, state, "evicted");
      }
    }
    return undefined;
  }

  /**
   * Closes a conversation's process, keeping its session id.
   *
   * @param conversation The conversation.
   * @param live Its live state.
   * @param reason Reported with it; none (a forget): not reported.
   * @returns Resolves once the process has gone.
   */
  hibernate(conversation: Conversation, live: Live, reason?: HibernateReason): Promise<unknown> {
    const sessionId = this.#rest(conversation, live);
    const closing = live.session.close().catch(() => {}).finally(() => {
      this.#closing.delete(closing);
      this.#deps.wake();
    });
    this.#closing.add(closing);
    if (reason) this.#deps.hibernated(conversation.key, sessionId, reason);
    return closing;
  }

  /* Leaves the live state for hibernated: the idle timer stops, the slot is freed. */
  #rest(conversation: Conversation, live: Live): string | undefined {
    disarmIdle(live);
    const sessionId = sessionIdOf(live);
    conversation.state = { phase: "hibernated", sessionId };
    this.#live.delete(conversation.key);
    return sessionId;
  }
}
