/**
 * What a relayed session does with a session store: it mirrors the CLI's
 * transcript (the stdout tap feeding a {@linkcode TranscriptMirror}), keeps
 * the conversation's record (a {@linkcode RecordWriter}), and, resumed from
 * the store by another relay, skips the input lines the old relay had
 * already written to its CLI.
 *
 * @module
 */

import { abortable, deadline, sleep } from "../../src/_deadline.ts";
import { TranscriptMirror } from "../../src/session/_mirror.ts";
import { userLineUuid } from "../../src/protocol/_user_line.ts";
import type { MirrorEvent, MirrorTarget } from "../../src/store/mirror_target.ts";
import type { SessionKey, SessionStore } from "../../src/store/session_store.ts";
import type { SpawnRequest } from "../../src/wire/wire.ts";
import { recordKey, type RecordState, RecordWriter, sha256 } from "./_relay_record.ts";
import { Fence } from "./_fence.ts";
import { AppendTracker } from "./_mirror_drain.ts";
import { StdoutTap } from "./_stdout_tap.ts";

/**
 * How long a relay whose store does not answer waits for an input line's
 * client to answer a ping before it counts the client gone.
 */
const LIVE_CHECK_MS = 1_000;

/** How a store-resumed session tells re-sent lines the old CLI had from new ones. */
export interface Resent {
  readonly store: SessionStore;
  /** The CLI transcript's key. */
  readonly transcript: SessionKey;
  /** The bound of loading it. */
  readonly loadTimeoutMs: number;
}

/**
 * How an ended session's mirror keeps catching the store up (`MirrorLinger`),
 * and who waits for it (the relay, when it closes).
 */
export interface LinkLinger {
  /** Aborted when the relay closes. */
  readonly signal: AbortSignal;
  /** How long after the session's end. */
  readonly forMs: number;
  /** Told of each lingering catch-up (it settles when done, never rejects). */
  track(done: Promise<void>): void;
}

/** What the session's store link is made of (each part optional). */
export interface StoreLinkParts {
  /** The transport's mirror target (`transport.info.mirror`). */
  readonly mirror?: MirrorTarget;
  /** Hears the mirror's events. */
  readonly publish?: (event: MirrorEvent) => void;
  /** The conversation's record. */
  readonly record?: RecordWriter;
  /** Set when the session was resumed from the store by this relay. */
  readonly resent?: Resent;
  /** How long a result line waits for the mirror's appends (default: 5000 ms). */
  readonly timeoutMs?: number;
  /** The conversation's fence: the mirror appends only while it admits. */
  readonly fence?: Fence;
  /** When set, a mirror still behind at the end keeps catching the store up (until fenced). */
  readonly linger?: LinkLinger;
}

/** One session's use of the store. */
export class StoreLink {
  readonly #mirror: TranscriptMirror | undefined;
  readonly #tap: StdoutTap | undefined;
  readonly #record: RecordWriter | undefined;
  readonly #tracker: AppendTracker | undefined;
  readonly #fence: Fence | undefined;
  readonly #timeoutMs: number;
  readonly #linger: LinkLinger | undefined;
  /** A result line went by in the chunk just forwarded. */
  #result = false;
  #resent: Resent | undefined;
  #uuids: Promise<Set<string>> | undefined;
  /** Settles once the fence stood above this relay's epoch (another relay resumed it). */
  readonly #fenced = Promise.withResolvers<void>();
  /** The epoch a retake raised the fence to, before the records of the relays between were read. */
  #unverified: number | undefined;
  /** Aborted when the session ends: an input line stops waiting for the store. */
  readonly #inputStop = new AbortController();

  /** @param parts The mirror target, the record, and the resume. */
  constructor(parts: StoreLinkParts) {
    const publish = parts.publish ?? (() => {});
    this.#timeoutMs = parts.timeoutMs ?? 5000;
    if (parts.mirror) {
      const tracker = this.#tracker = new AppendTracker(
        parts.mirror,
        parts.fence,
        () => this.#fenced.resolve(),
      );
      const mirror = this.#mirror = new TranscriptMirror(tracker.target, publish);
      this.#tap = new StdoutTap({
        mirror: (frame) => mirror.take(frame),
        result: () => {
          mirror.flushAll();
          this.#result = true;
        },
        dropped: (reason) =>
          publish({ type: "mirror", status: "dropped", key: undefined, entries: 0, reason }),
      });
    }
    this.#record = parts.record;
    this.#resent = parts.resent;
    this.#fence = parts.fence;
    this.#linger = parts.linger;
  }

  /**
   * Before a client resumes the session here: takes the conversation back
   * when another relay raised its fence meanwhile (`Fence.retake`), the
   * record following at the new epoch; unless a relay in between wrote
   * input to its CLI that this one's never had (read after the fence is
   * raised, so a line in flight there shows): this CLI's history is behind,
   * so this relay stands down (`fenced` settles) and the client resumes
   * from the store. Never rejects.
   *
   * @returns False when the store did not answer (within its bound): whether
   *   another relay ran the conversation meanwhile is not known, so the
   *   client may not resume here yet; the CLI is kept (its transcript may
   *   be ahead of the store, which it catches up once the store is back),
   *   and the next resume asks again.
   */
  async retake(): Promise<boolean> {
    const fence = this.#fence;
    if (fence === undefined) return true;
    try {
      const epoch = await fence.retake();
      if (epoch !== undefined) this.#unverified = epoch;
    } catch {
      return false;
    }
    const since = this.#unverified;
    if (since === undefined) return true;
    const record = this.#record;
    let behind = true;
    if (record !== undefined) {
      try {
        behind = await record.writtenSince(since) > record.record.applied;
      } catch {
        return false; // the fence is ours; what the relays between wrote is read next time
      }
    }
    this.#unverified = undefined;
    if (behind) {
      fence.standDown();
      this.#fenced.resolve();
      return true;
    }
    record?.update({ epoch: since });
    return true;
  }

  /**
   * Settles once another relay resumed the conversation in a CLI of its
   * own (its fence stands above this relay's epoch): this relay's
   * transcript appends stop, and its session should end. Never settles
   * without a fence.
   */
  get fenced(): Promise<void> {
    return this.#fenced.promise;
  }

  /**
   * Before an input line goes to the CLI: whether the conversation is still
   * this relay's. A relay stalled (SIGSTOP, a long pause) while another
   * resumed the conversation reads the lines its client sent before it
   * left only after that takeover; written, the old CLI would run a turn the
   * new one runs too. Once fenced, the session ends (`fenced`). Never rejects.
   *
   * The order the store witnesses: the record says the line may be written
   * (`writing`) before the fence is checked, and a relay taking over raises
   * the fence before it reads the record. So a line written here is one the
   * other relay sees as in flight (it waits until this relay's record says
   * written, or not: `_store_wake.ts`), however slow the store or this
   * process.
   *
   * A store that does not answer admits the line only while the client that
   * sent it still answers on its connection (`live`): then no other relay
   * took the conversation over (it had to have the client, and the store),
   * and turns go on through the outage. A line read late, its client gone,
   * waits for the store (the writer's retries pace the asking) and then for
   * the fence, until `stopInput()`.
   *
   * @param seq The line's input sequence number.
   * @param live Whether the line's client answers on its connection within the bound.
   */
  async admitsInput(seq: number, live: (timeoutMs: number) => Promise<boolean>): Promise<boolean> {
    const fence = this.#fence;
    if (fence === undefined) return true;
    const record = this.#record;
    const stop = this.#inputStop.signal;
    for (let pause = 100;; pause = Math.min(pause * 2, 2_000)) {
      if (fence.fenced) {
        this.#fenced.resolve();
        return false;
      }
      if (stop.aborted) return false;
      let answered = true;
      if (record !== undefined) {
        record.update({ writing: seq });
        answered = await abortable(record.stored(), stop).catch(() => false);
      }
      if (answered) {
        try {
          if (await fence.admitsOnce()) return true;
          // Not written: a relay waiting on the line learns so (then its own CLI runs it).
          record?.update({ writing: record.record.applied });
          this.#fenced.resolve();
          return false;
        } catch {
          // The store did not answer the check: as for the record.
        }
      }
      if (stop.aborted) return false;
      if (await live(LIVE_CHECK_MS)) return true;
      // A record that failed paced the asking (its writer's retries); a fence check that did not
      // answer is asked again after a pause.
      if (answered) await sleep(pause, { signal: stop }).catch(() => {});
    }
  }

  /**
   * Ends the wait of an input line for the store (`admitsInput`): the
   * session ends. The line stays unwritten.
   */
  stopInput(): void {
    this.#inputStop.abort();
  }

  /** Whether the fence stood above this relay's epoch: its output is no longer the conversation's. */
  get fencedOff(): boolean {
    return this.#fence?.fenced === true;
  }

  /** Whether stdout goes through the tap. */
  get taps(): boolean {
    return this.#tap !== undefined;
  }

  /** The record's epoch (0 without a record). */
  get epoch(): number {
    return this.#record?.record.epoch ?? 0;
  }

  /** Whether input acknowledgements wait for the record. */
  get records(): boolean {
    return this.#record !== undefined;
  }

  /**
   * A stdout chunk: the bytes to forward (mirror lines taken out).
   *
   * @param chunk Fresh bytes from the CLI.
   */
  forward(chunk: Uint8Array): Uint8Array | undefined {
    return this.#tap ? this.#tap.take(chunk) : chunk;
  }

  /**
   * After `forward()`: when a result line went by, resolves once the
   * transcript entries flushed at it are in the store (within the bound; at
   * once when an append fails), so that the client never has a result the
   * store lacks the turn of. `undefined` when no result went by.
   */
  resultStored(): Promise<void> | undefined {
    if (!this.#result) return undefined;
    this.#result = false;
    return this.#tracker?.drained(this.#timeoutMs);
  }

  /** The end of stdout: what is left to forward. */
  endOfOutput(): Uint8Array | undefined {
    return this.#tap?.end();
  }

  /**
   * Flushes the mirror and stops it (bounded; calls the target's `release`).
   * A transcript still behind then keeps being caught up in the background,
   * with the link's `linger`, until another relay fences this one off.
   */
  async closeMirror(): Promise<void> {
    const mirror = this.#mirror;
    if (mirror === undefined) return;
    const linger = this.#linger;
    if (linger === undefined) return await mirror.close();
    const fenced = new AbortController();
    void this.#fenced.promise.then(() => fenced.abort());
    const signal = AbortSignal.any([linger.signal, fenced.signal]);
    await mirror.close({ signal, forMs: linger.forMs });
    linger.track(mirror.lingering);
  }

  /**
   * An input line was written to the CLI: records it. Resolves when the
   * record holds it, or its bound passed (never rejects).
   *
   * @param seq Its input sequence number.
   */
  applied(seq: number): Promise<void> {
    if (!this.#record) return Promise.resolve();
    this.#record.update({ applied: seq });
    return this.#record.saved();
  }

  /**
   * Whether a line re-sent after a resume from the store is a user line the
   * old relay's CLI already took (its uuid is in the stored transcript):
   * then it is not written again. Checks lines until the first one that is
   * new; later lines are new too. Never rejects (a failed load: written).
   *
   * @param line The JSON text.
   */
  async alreadyTaken(line: string): Promise<boolean> {
    const resent = this.#resent;
    if (!resent) return false;
    const uuid = userLineUuid(line);
    if (uuid === undefined) return false;
    this.#uuids ??= loadUuids(resent);
    const taken = (await this.#uuids).has(uuid);
    if (!taken) {
      this.#resent = undefined;
      this.#uuids = undefined;
    }
    return taken;
  }

  /**
   * Saves the record's state (bounded).
   *
   * @param state Hibernated, or closed for good.
   */
  async mark(state: RecordState): Promise<void> {
    this.#record?.update({ state });
    await this.#record?.saved();
  }

  /**
   * Writes the last snapshot (bounded) and stops the record.
   *
   * @param state The state to leave (undefined: as it is, for another relay to resume).
   */
  async closeRecord(state?: RecordState): Promise<void> {
    await this.#record?.close(state === undefined ? undefined : { state });
  }
}

/**
 * What hears a session's mirror events: its span, then the relay's
 * `onMirror` (whose failure changes nothing).
 *
 * @param trace The session's span.
 * @param onMirror The relay's callback, if any.
 */
export function mirrorPublisher(
  trace: { mirror(event: MirrorEvent): void },
  onMirror: ((event: MirrorEvent) => void) | undefined,
): (event: MirrorEvent) => void {
  return (event) => {
    trace.mirror(event);
    try {
      onMirror?.(event);
    } catch {
      // The user's callback.
    }
  };
}

/** The relay's side of a store link. */
export interface LinkSettings {
  /** The shared store, if the relay has one. */
  readonly store: SessionStore | undefined;
  /** The bound of each record append and of an acknowledgement's wait for it. */
  readonly timeoutMs: number;
  /** The transport's mirror target, if it mirrors. */
  readonly mirror: MirrorTarget | undefined;
  /** Hears the mirror's events. */
  readonly publish: (event: MirrorEvent) => void;
  /** How an ended session's mirror keeps catching the store up, if it does. */
  readonly linger?: LinkLinger;
}

/** The session a store link is for. */
export interface LinkedSession {
  /** Its token. */
  readonly id: string;
  /** The credential's owner (`Credential.owner`). */
  readonly owner: string;
  /** The CLI's session id when the session can be resumed (else no record is kept). */
  readonly cliSessionId: string | undefined;
  /** The spawn request it was started with. */
  readonly spawn: SpawnRequest;
  /** The folder its CLI runs in, relative to the workspace (see `RelayRecord.cwd`). */
  readonly cwd: string | undefined;
  /** The last input written to a CLI before (a resume), else 0. */
  readonly applied: number;
  /** The record's epoch: 0 for a new conversation, one more than before for a resume. */
  readonly epoch: number;
  /** Set for a resume from the store. */
  readonly resent?: Resent;
}

/**
 * A session's use of the store: the transcript mirror (when the transport
 * mirrors), and the record (with a store, when the session can be resumed),
 * whose first snapshot is saved before this resolves (within `timeoutMs`),
 * so before the client learns the token.
 *
 * @param settings The relay's store, bound and mirror target.
 * @param session The session.
 * @returns The link, or `undefined` when there is nothing to do.
 */
export async function openStoreLink(
  settings: LinkSettings,
  session: LinkedSession,
): Promise<StoreLink | undefined> {
  const { store, timeoutMs, mirror, publish, linger } = settings;
  let record: RecordWriter | undefined;
  if (store !== undefined && session.cliSessionId !== undefined) {
    const [key, owner] = await Promise.all([recordKey(session.id), sha256(session.owner)]);
    record = new RecordWriter(store, key, {
      owner,
      cliSessionId: session.cliSessionId,
      spawn: session.spawn,
      ...(session.cwd === undefined ? {} : { cwd: session.cwd }),
      applied: session.applied,
      state: "live",
      epoch: session.epoch,
    }, { appendTimeoutMs: timeoutMs, waitMs: timeoutMs });
    await record.saved();
  }
  if (mirror === undefined && record === undefined) return undefined;
  // Fenced when another relay resumes this conversation (only a resumable one can be).
  const fence = store !== undefined && session.cliSessionId !== undefined && mirror !== undefined
    ? new Fence(store, session.cliSessionId, session.epoch, timeoutMs)
    : undefined;
  return new StoreLink({
    publish,
    timeoutMs,
    ...(fence ? { fence } : {}),
    // Only behind its fence: without one, nothing would stop it writing after another relay.
    ...(fence && linger ? { linger } : {}),
    ...(mirror ? { mirror } : {}),
    ...(record ? { record } : {}),
    ...(session.resent ? { resent: session.resent } : {}),
  });
}

async function loadUuids(resent: Resent): Promise<Set<string>> {
  try {
    using limit = deadline(resent.loadTimeoutMs);
    const entries = await abortable(resent.store.load(resent.transcript), limit.signal);
    return new Set(
      (entries ?? []).flatMap((entry) => entry.uuid === undefined ? [] : [entry.uuid]),
    );
  } catch {
    return new Set();
  }
}
