/**
 * Relay session records in a session store, so that any relay sharing the
 * store can resume a conversation another one started.
 *
 * - Key: the reserved project key {@linkcode RELAY_SESSIONS_PROJECT_KEY}, and as
 *   session id the base64url SHA-256 of the session token (never the token).
 * - Entries: snapshots `{ type: "duplex-relay-session", uuid, owner, cliSessionId,
 *   spawn, cwd, applied, writing, state, epoch, at }`, the owner as the base64url
 *   SHA-256 of the credential's owner; the last one counts. They are appended at
 *   the start, before each input line is written to the CLI (`writing`: the
 *   line may reach the CLI from now on), after it was written (`applied`,
 *   before its acknowledgement) or not (`writing` back to `applied`: fenced
 *   off), at hibernation and at the end (`state: "closed"`).
 * - The owners of the conversations a relay names share the project key
 *   (`duplex-relay-conversation` entries, see `_conversations.ts`).
 * - A {@linkcode RecordWriter} appends the latest snapshot, one append at a
 *   time (snapshots that wait are coalesced), and retries while the store
 *   fails; `saved()` waits for the snapshot of now, within a bound.
 *
 * @module
 */

import { abortable, deadline, sleep } from "../../src/_deadline.ts";
import { base64url } from "../../src/codec/base64url.ts";
import type { SpawnRequest } from "../../src/wire/wire.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";

import { RELAY_SESSIONS_PROJECT_KEY } from "./relay_options.ts";

/** The `type` of a record entry. */
export const RECORD_TYPE = "duplex-relay-session";

/** Where a conversation is: running on a relay, hibernated, or ended for good. */
export type RecordState = "live" | "hibernated" | "closed";

/** What a record says of a conversation. */
export interface RelayRecord {
  /** The base64url SHA-256 of the credential's owner (`Credential.owner`). */
  readonly owner: string;
  /** The CLI's session id (`--resume`). */
  readonly cliSessionId: string;
  /** The spawn request as the relay took it (checked again against the policy on resume). */
  readonly spawn: SpawnRequest;
  /**
   * The folder the CLI runs in, relative to the workspace (`""`: the
   * workspace itself); absent in records of relays before it was kept.
   */
  readonly cwd?: string;
  /** The last input sequence number written to the CLI. */
  readonly applied: number;
  /**
   * The last input sequence number that may have reached the CLI: saved
   * before the line is written, so above `applied` while a write is in
   * flight (a relay taking the conversation over waits for it to settle,
   * see `_store_wake.ts`). Absent in records of relays before it was kept,
   * and when it equals `applied`.
   */
  readonly writing?: number;
  readonly state: RecordState;
  /**
   * Bumped by each resume in a new process: a reader takes the last entry of
   * the highest epoch, so a relay that still writes after another resumed the
   * conversation (its grace ending, say) cannot undo what the newer one wrote.
   */
  readonly epoch: number;
}

const encoder = new TextEncoder();
/** A CLI session id as the relay names them (a UUID): a record holding anything else is void. */
const CLI_SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a CLI session id is one the relay resumes with `--resume` (a UUID,
 * as the relay names them, not a name).
 *
 * @param id The id.
 */
export function isCliSessionId(id: string): boolean {
  return CLI_SESSION_ID.test(id);
}

/**
 * The base64url SHA-256 of a text.
 *
 * @param text The text.
 * @returns 43 characters.
 */
export async function sha256(text: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}

/**
 * The store key of a session token's record.
 *
 * @param token The relay's session token.
 * @returns The key.
 */
export function recordKey(token: string): Promise<SessionKey> {
  return relayKey(token);
}

/**
 * A key under the relay's reserved project key: as session id the base64url
 * SHA-256 of `text` (a session token, `conversation:<id>`, `fence:<id>`).
 *
 * @param text What the key stands for.
 * @returns The key.
 */
export async function relayKey(text: string): Promise<SessionKey> {
  return { projectKey: RELAY_SESSIONS_PROJECT_KEY, sessionId: await sha256(text) };
}

/**
 * The record a key's entries tell: the last well-formed entry of the highest epoch.
 *
 * @param entries What the store loaded (`null`: nothing).
 * @param below Only entries of epochs below it (the records of the relays that ran the
 *   conversation before the one taking it over at that epoch).
 * @returns The record, or `undefined`.
 */
export function lastRecord(
  entries: readonly SessionStoreEntry[] | null,
  below = Infinity,
): RelayRecord | undefined {
  let found: RelayRecord | undefined;
  for (const entry of entries ?? []) {
    const record = recordOf(entry as Record<string, unknown>);
    if (
      record !== undefined && record.epoch < below &&
      (found === undefined || record.epoch >= found.epoch)
    ) {
      found = record;
    }
  }
  return found;
}

/**
 * The last input a record's relay may have written to its CLI: `applied`,
 * or above it while that relay's write was in flight.
 *
 * @param record The record.
 */
export function lastWritten(record: RelayRecord): number {
  return Math.max(record.applied, record.writing ?? 0);
}

function recordOf(entry: Record<string, unknown>): RelayRecord | undefined {
  if (entry.type !== RECORD_TYPE) return undefined;
  const { owner, cliSessionId, spawn, cwd, applied, writing, state, epoch } = entry;
  if (
    typeof owner === "string" && typeof cliSessionId === "string" &&
    isCliSessionId(cliSessionId) &&
    typeof spawn === "object" && spawn !== null && !Array.isArray(spawn) &&
    (cwd === undefined || typeof cwd === "string") &&
    Number.isSafeInteger(applied) && (applied as number) >= 0 &&
    (writing === undefined || Number.isSafeInteger(writing) && (writing as number) >= 0) &&
    Number.isSafeInteger(epoch) && (epoch as number) >= 0 &&
    (state === "live" || state === "hibernated" || state === "closed")
  ) {
    return {
      owner,
      cliSessionId,
      spawn: spawn as SpawnRequest,
      ...(cwd === undefined ? {} : { cwd }),
      applied: applied as number,
      ...(writing === undefined || (writing as number) <= (applied as number)
        ? {}
        : { writing: writing as number }),
      state,
      epoch: epoch as number,
    };
  }
  return undefined;
}

/** How a writer appends. */
export interface WriterSettings {
  /** The bound of one append. */
  readonly appendTimeoutMs: number;
  /** How long `saved()` waits for a failing store before it gives up (the ack then goes out). */
  readonly waitMs: number;
}

/** Appends one conversation's record snapshots, the latest first, retrying while the store fails. */
export class RecordWriter {
  readonly #store: SessionStore;
  readonly #key: SessionKey;
  readonly #settings: WriterSettings;
  #record: RelayRecord;
  /** Bumped by each change; `#stored` is the version the store holds. */
  #version = 0;
  #stored = -1;
  #running: Promise<void> | undefined;
  /** Who waits for a version; `failFast` ones hear of the first append that fails, too. */
  #waiters: { version: number; resolve: (stored: boolean) => void; failFast: boolean }[] = [];
  #closed = false;
  readonly #stop = new AbortController();
  #retryDelay = 100;

  /**
   * @param store The shared store.
   * @param key The record's key ({@linkcode recordKey}).
   * @param record The first snapshot (not yet written: call `saved()`).
   * @param settings The bounds.
   */
  constructor(store: SessionStore, key: SessionKey, record: RelayRecord, settings: WriterSettings) {
    this.#store = store;
    this.#key = key;
    this.#record = record;
    this.#settings = settings;
    this.#kick();
  }

  /** The snapshot of now. */
  get record(): RelayRecord {
    return this.#record;
  }

  /**
   * Changes the record; the writer appends it soon.
   *
   * @param change The fields that change.
   */
  update(change: Partial<Pick<RelayRecord, "applied" | "writing" | "state" | "epoch">>): void {
    if (this.#closed) return;
    const record = this.#record;
    if (Object.entries(change).every(([k, v]) => record[k as keyof RelayRecord] === v)) return;
    this.#record = { ...record, ...change };
    this.#version++;
    this.#kick();
  }

  /**
   * Resolves once the store holds the snapshot of now, or after `waitMs`
   * (a failing store: the writer goes on retrying). Never rejects.
   */
  async saved(): Promise<void> {
    await this.#wait(false);
  }

  /**
   * Whether the store took the snapshot of now: true once it holds it; false
   * at the first append that fails meanwhile, or after `waitMs` (the writer
   * goes on retrying). Never rejects.
   */
  stored(): Promise<boolean> {
    return this.#wait(true);
  }

  async #wait(failFast: boolean): Promise<boolean> {
    const version = this.#version;
    if (this.#stored >= version) return true;
    const { promise, resolve } = Promise.withResolvers<boolean>();
    this.#waiters.push({ version, resolve, failFast });
    using limit = deadline(this.#settings.waitMs);
    return await abortable(promise, limit.signal).catch(() => false);
  }

  /**
   * The highest input that the relays which ran the conversation after this
   * one's epoch and below `below` wrote, or may have, to their CLIs (-1:
   * none), as their records say (loaded within `appendTimeoutMs`).
   *
   * @param below The epoch this relay takes the conversation back at.
   * @throws {Error} When the store did not load the record within the bound.
   */
  async writtenSince(below: number): Promise<number> {
    using limit = deadline(this.#settings.appendTimeoutMs);
    const entries = await abortable(this.#store.load(this.#key), limit.signal);
    let highest = -1;
    for (const entry of entries ?? []) {
      const record = recordOf(entry as Record<string, unknown>);
      if (record !== undefined && record.epoch > this.#record.epoch && record.epoch < below) {
        highest = Math.max(highest, lastWritten(record));
      }
    }
    return highest;
  }

  /**
   * Writes the last snapshot (bounded by `waitMs`) and stops retrying.
   *
   * @param change A last change (`state: "closed"` at the end).
   */
  async close(change?: Partial<Pick<RelayRecord, "applied" | "state">>): Promise<void> {
    if (change) this.update(change);
    await this.saved();
    this.#closed = true;
    this.#stop.abort();
    await this.#running;
  }

  #kick(): void {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
      if (this.#stored < this.#version && !this.#closed) this.#kick();
    });
  }

  async #run(): Promise<void> {
    while (this.#stored < this.#version && !this.#closed) {
      const version = this.#version;
      const entry = { type: RECORD_TYPE, uuid: crypto.randomUUID(), ...this.#record, at: now() };
      try {
        using limit = deadline(this.#settings.appendTimeoutMs, { signal: this.#stop.signal });
        await abortable(this.#store.append(this.#key, [entry]), limit.signal);
        this.#stored = version;
        this.#retryDelay = 100;
        this.#settle();
      } catch {
        this.#settle(true);
        await sleep(this.#retryDelay, { signal: this.#stop.signal }).catch(() => {});
        this.#retryDelay = Math.min(5000, this.#retryDelay * 2);
      }
    }
  }

  /* Resolves the waiters the store now holds the version of (and, after a failure, the fast ones). */
  #settle(failed = false): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) {
      if (waiter.version <= this.#stored) waiter.resolve(true);
      else if (failed && waiter.failFast) waiter.resolve(false);
      else this.#waiters.push(waiter);
    }
  }
}

function now(): string {
  return new Date().toISOString();
}
