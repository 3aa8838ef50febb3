/**
 * {@linkcode SessionPool}: many conversations on one host over a few live
 * `claude` processes. A conversation is a key: `acquire(key)` resolves with
 * its live {@linkcode DuplexSession} (its own process, a spare, or a new
 * one), `release(key)` ends the hold. At `maxLive` processes, or after
 * `idleMs` without a holder, a conversation is hibernated (its process
 * closed, its session id kept) and its next `acquire` resumes it, so the
 * model sees its history. Spares, started before their conversation is
 * known, make first turns fast. The processes are the subprocess adapter's
 * (`@duplex/claude/subprocess`); `process` takes its options.
 *
 * @example One slot, two conversations: hibernated and resumed
 * ```ts
 * import { SessionPool } from "@duplex/claude/pool";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * // A stand-in for each process (a real pool runs `claude` with `process`):
 * // it echoes every prompt, and one started to resume keeps the session id.
 * await using pool = new SessionPool({
 *   maxLive: 1,
 *   launch: (process) =>
 *     new ScriptedCli({
 *       echo: true,
 *       ...(process.resume === undefined ? {} : { sessionId: process.resume }),
 *     }).transport,
 * });
 * const hi = await pool.withSession("alice", (s) => s.send("Hi, I am Alice."));
 * assert.equal(hi.result.text, "Echo: Hi, I am Alice.");
 * const alice = pool.peek("alice")?.sessionId;
 *
 * // One slot: bob's acquire hibernates alice, who nobody holds.
 * await pool.withSession("bob", (s) => s.send("Hi, I am Bob."));
 * assert.equal(pool.peek("alice")?.state, "hibernated");
 *
 * // Alice's next acquire wakes her: a resume of the same session.
 * await pool.withSession("alice", (s) => s.send("Who am I?"));
 * assert.deepEqual(pool.peek("alice"), { state: "live", sessionId: alice, holds: 0, busy: false });
 * const { handouts, hibernations, evictions } = pool.health;
 * assert.deepEqual(handouts, { spare: 0, parked: 0, cold: 2, resumed: 1 });
 * assert.deepEqual({ hibernations, evictions }, { hibernations: 2, evictions: 2 });
 * ```
 *
 * ## Parts
 *
 * | File | What it owns |
 * | --- | --- |
 * | `session_pool.ts` | `SessionPool`: the public methods; the walk of an acquire (its own live process, else a start once it is first in the waiting line and a slot is free, else an eviction to make room); the starts |
 * | `_conversation.ts` | one conversation's state (new, starting, live with its idle timer, hibernated with its session id) and what `peek` and `health` read of it |
 * | `_live_slots.ts` | the live conversations, least recently used first: adoption of a started process, idle timers, hibernation, eviction, crashes, the room left (processes still closing count) |
 * | `_waiting_line.ts` | the acquires waiting for a slot, in arrival order |
 * | `_launcher.ts` | how a conversation gets a process (a resume, a warm spare, a parked spare claimed, a cold start) and how spares start, each bounded by `startTimeoutMs` |
 * | `_primer.ts` | priming a warm spare (`primeSpares`): the empty `shouldQuery: false` line that does the CLI's first-line work, its answer hidden from the session |
 * | `_spare_shelf.ts` | the spares: kept at their number, replaced in the background, `prewarmConcurrency` at once, none while a conversation starts or runs its first turn, backoff after failures |
 * | `_pool_report.ts`, `_wait_times.ts` | the events (`subscribe()`, `onEvent`), the counters, the acquire wait times, the `health` snapshot |
 * | `pool_options.ts` | the options of the pool, of a conversation and of `acquire`, and their pure checks |
 * | `pool_events.ts` | what the pool reports: `PoolEvent`, `PoolHealth`, `ConversationState` |
 *
 * ## Words
 *
 * As the pool uses them (the file that does each in brackets):
 *
 * - **spare**: a CLI started before its conversation is known, initialised
 *   and waiting for a first user line. A *warm* spare runs with the pool's
 *   `process` options in `process.cwd` and serves a new conversation that
 *   asks for no more than a model and a permission mode (set after the
 *   hand-out); a *parked* spare (`--await-claim`) waits in a neutral folder
 *   for a *claim* (`_spare_shelf.ts`, `_launcher.ts`).
 * - **prime**: with `primeSpares`, a warm spare's one user line with no
 *   content and `shouldQuery: false`, sent once it is initialised: the CLI
 *   does its first-line work (the session's first attachments), makes no
 *   API request and records no message; its answer is hidden from the
 *   session, and the spare is ready once primed (`_primer.ts`).
 * - **claim**: binding a parked spare to a new conversation's folder and
 *   options (`claim_session`). A refused claim (`claim_refused`) falls back
 *   to a cold start (`_launcher.ts`).
 * - **hibernate**: closing a conversation's process and keeping its session
 *   id: after `idleMs` without a holder, to make room at `maxLive` (an
 *   *eviction*: the least recently used idle conversation), or on `forget`
 *   (not reported). A conversation that is held, runs a turn or has a
 *   permission pending is never hibernated. A live conversation whose
 *   process ends by itself (`crashed`) is hibernated too (`_live_slots.ts`).
 * - **wake**: the `acquire` of a hibernated conversation, which gets a
 *   process again by a *resume* (`session_pool.ts`). Inside the pool the
 *   waiting line is woken as well: each waiting acquire looks again when a
 *   slot may have been freed (`_waiting_line.ts`).
 * - **resume**: a start with `--resume <session id>` (`via: "resumed"`): the
 *   same CLI session, its history seen by the model. It wakes a hibernated
 *   conversation and starts a new key given `resume`; it needs what the CLI
 *   needs (session persistence, the same config folder and `cwd`), else
 *   `acquire` rejects with `resume_failed`, or `not_found` when the CLI has
 *   no transcript of that session id (`_launcher.ts`).
 * - **restore**: the pool restores nothing of its own: it keeps no
 *   transcript and no output, and a resume continues from the CLI's session
 *   (on disk, or in `process.sessionStore`). Restoring a client's stream is
 *   the relay's (`@duplex/claude/relay`).
 * - **resend**: the pool sends nothing again: a turn whose process ended
 *   rejects (`process_exited`) and is the caller's to send after the next
 *   `acquire`. Input resent after a reconnect is the relay's.
 *
 * Permissions: those of the subprocess adapter (`--allow-run`,
 * `--allow-env`), and `--allow-write` for the parking folder of parked
 * spares (a temporary folder unless `parkDir` is given).
 *
 * @module
 */

export { SessionPool } from "./session_pool.ts";
export type {
  AcquireOptions,
  ConversationOptions,
  PoolPermissionContext,
  PoolPermissionHandler,
  PoolSessionOptions,
  SessionPoolOptions,
} from "./pool_options.ts";
export type {
  ConversationState,
  HibernateReason,
  PoolEvent,
  PoolHealth,
  SpareKind,
  StartVia,
  WaitTimes,
} from "./pool_events.ts";
