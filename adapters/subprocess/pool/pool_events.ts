/**
 * What a {@linkcode SessionPool} reports: its events, its health snapshot and
 * where one conversation is (`peek`).
 *
 * @module
 */

import type { TransportExit } from "../../../src/errors.ts";

/** How a conversation got its process. */
export type StartVia = "spare" | "parked" | "cold" | "resumed";

/** The two kinds of spares. */
export type SpareKind = "warm" | "parked";

/** Why a conversation was hibernated. */
export type HibernateReason = "idle" | "evicted";

/** One thing that happened in a pool. */
export type PoolEvent =
  /** A conversation got a live process. */
  | {
    readonly type: "started";
    readonly key: string;
    readonly via: StartVia;
    readonly sessionId: string | undefined;
    /** From the start of the start to the CLI ready. */
    readonly ms: number;
  }
  /** A conversation could not get a process (the acquire rejected with `error`). */
  | { readonly type: "start_failed"; readonly key: string; readonly error: Error }
  /**
   * A spare taken for a conversation could not serve it (it died, or its
   * `set_model` / `set_permission_mode` / claim failed for another reason
   * than a refusal); it was closed and the conversation started another way.
   */
  | {
    readonly type: "handout_failed";
    readonly key: string;
    readonly kind: SpareKind;
    readonly error: Error;
  }
  /** A parked spare refused its claim; the conversation starts cold instead. */
  | {
    readonly type: "claim_refused";
    readonly key: string;
    /** The CLI's reason token (`cwd_not_found`, …). */
    readonly reason: string;
    readonly message: string;
  }
  /** A conversation's process is being closed (gone soon after); its session id is kept to resume it. */
  | {
    readonly type: "hibernated";
    readonly key: string;
    readonly sessionId: string | undefined;
    readonly reason: HibernateReason;
  }
  /** A live conversation's process ended by itself; the next acquire resumes it. */
  | {
    readonly type: "crashed";
    readonly key: string;
    readonly sessionId: string | undefined;
    readonly exit: TransportExit | undefined;
  }
  /** An acquire found no live slot and waits (`position` from 1). */
  | { readonly type: "waiting"; readonly key: string; readonly position: number }
  /** A spare is ready. */
  | { readonly type: "spare_ready"; readonly kind: SpareKind; readonly ms: number }
  /** A spare could not start; the next try is in `retryInMs`. */
  | {
    readonly type: "spare_failed";
    readonly kind: SpareKind;
    readonly error: Error;
    readonly retryInMs: number;
  }
  /**
   * The CLI lacks a feature the pool would use, and the pool does without
   * it (said once): `awaitClaim` (parked spares, `--await-claim`) makes the
   * pool keep as many warm spares instead.
   */
  | { readonly type: "degraded"; readonly feature: "awaitClaim"; readonly message: string }
  /** A spare's process ended before it was handed out; it is replaced. */
  | { readonly type: "spare_died"; readonly kind: SpareKind; readonly exit: TransportExit }
  /** The pool closed. */
  | { readonly type: "closed" }
  /** A slow subscriber missed this many events. */
  | { readonly type: "lagged"; readonly count: number };

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

/** Acquire wait times, in milliseconds, over the last 1024 acquires. */
export interface WaitTimes {
  /** Acquires measured in all. */
  readonly count: number;
  /** The median of the last 1024. */
  readonly p50Ms: number;
  /** The 99th percentile of the last 1024. */
  readonly p99Ms: number;
  /** The longest of the last 1024. */
  readonly maxMs: number;
}

/** A snapshot of a pool, for a health endpoint. */
export interface PoolHealth {
  /** Conversations with a live process (starting ones included). */
  readonly live: number;
  /** Of those, still starting. */
  readonly starting: number;
  /** Of those, with a turn running. */
  readonly busy: number;
  /** Processes being closed (hibernations in progress). */
  readonly closing: number;
  /** Spares for the known configuration (starting or ready). */
  readonly spares: number;
  /** Parked spares (starting or ready). */
  readonly parked: number;
  /** Conversations that had a process (or were given a session id to resume) and have none now. */
  readonly hibernated: number;
  /** Acquires waiting for a slot. */
  readonly waiting: number;
  /** How conversations got their processes, counted since the pool started. */
  readonly handouts: Readonly<Record<StartVia, number>>;
  /** Processes closed to hibernate their conversation (idle, or to make room). */
  readonly hibernations: number;
  /** Hibernations to make room (part of `hibernations`). */
  readonly evictions: number;
  /** Live conversations whose process ended by itself (each resumed by its next acquire). */
  readonly crashes: number;
  /** Starts and resumes that failed. */
  readonly failures: number;
  /** Claims of parked spares the CLI refused (each followed by a cold start). */
  readonly claimRefusals: number;
  /** Spares taken for a conversation that could not serve it (see `handout_failed`). */
  readonly handoutFailures: number;
  /** Spares that failed to start or died before a hand-out. */
  readonly spareFailures: number;
  /** Acquires refused with `pool_exhausted`. */
  readonly exhausted: number;
  /** How long successful acquires took (waiting for a slot and the start included). */
  readonly acquireWait: WaitTimes;
}
