/**
 * One relayed session: a running `claude`, its output sequence and replay
 * buffer, its input sequence, and the connection attached to it (if any).
 *
 * @module
 */

import { type Deadline, deadline } from "../../src/_deadline.ts";
import { utf8Length } from "../../src/_utf8.ts";
import { base64url } from "../../src/codec/base64url.ts";
import { CLOSE, encodeOutput, type ReadyMessage, type RelayMessage } from "../../src/wire/wire.ts";
import type { RecordState } from "./_relay_record.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { HIBERNATED_TAIL_BYTES, resumeOptions } from "./_hibernation.ts";
import { OutputBuffer, type OutputEntry } from "./_output_buffer.ts";
import type { SessionTrace } from "./_relay_telemetry.ts";
import {
  closeRequested,
  CLOSING,
  type InputResult,
  type Peer,
  type Phase,
  type RelaySessionSettings,
  RUNNING,
} from "./_relay_session_types.ts";

export type {
  InputResult,
  Peer,
  RelaySessionSettings,
  Restore,
  Start,
  Wake,
} from "./_relay_session_types.ts";

const encoder = new TextEncoder();

/** One `claude` process shared by the connections that attach to it in turn. */
export class RelaySession {
  /** The unguessable session token (32 random bytes, base64url). */
  readonly id: string;
  readonly #transport: Transport;
  readonly #settings: RelaySessionSettings;
  readonly #buffer: OutputBuffer;
  readonly #run: Promise<void>;
  #outSeq = 0;
  #received = 0;
  #applied = 0;
  /** Bytes of input taken and not yet written to the CLI. */
  #pendingBytes = 0;
  #writing: Promise<void> = Promise.resolve();
  /** Acknowledgements that wait for the record, in order. */
  #acks: Promise<void> = Promise.resolve();
  #peer: Peer | undefined;
  #timer: Deadline | undefined;
  #phase: Phase = RUNNING;
  /** A restored session's CLI before: the input it took, the output of it the client can get. */
  readonly #gone: ReadyMessage["gone"];
  /** Resolved when acknowledgements free room in the window (flow control of stdout). */
  #room: PromiseWithResolvers<void> | undefined;

  /**
   * Starts pumping the transport's output.
   *
   * @param transport The spawned CLI.
   * @param settings Grace, buffer bound and the forget callback.
   */
  constructor(transport: Transport, settings: RelaySessionSettings) {
    this.#transport = transport;
    this.#settings = settings;
    this.#buffer = new OutputBuffer(settings.bufferBytes);
    const restore = settings.restore;
    this.id = settings.id ?? randomToken();
    if (restore) {
      // Continues the hibernated session's numbering: the client resumes as from a drop.
      const taken = restore.taken?.length ? { uuids: [...restore.taken] } : {};
      this.#gone = { inSeq: restore.applied, outSeq: restore.outSeq, ...taken };
      this.#outSeq = restore.outSeq;
      this.#received = this.#applied = restore.applied;
      this.#buffer.ack(restore.keptAfter);
      for (const entry of restore.tail) this.#buffer.push(entry);
    }
    this.#run = this.#pump();
    // Another relay resumed the conversation in a CLI of its own: this one's is stale.
    settings.store?.fenced.then(() => this.#fencedOff());
  }

  /* Another relay runs the conversation now: this session ends, kept in the store as it is. */
  #fencedOff(): void {
    if (this.forgotten) return;
    this.#settings.trace.fenced();
    const peer = this.#peer;
    void this.forget("keep");
    // A client still here resumes again: the store says where the conversation stands.
    peer?.end(CLOSE.goingAway, "Another relay resumed the conversation; resume it again");
  }

  /** The CLI's process id, if known. */
  get pid(): number | undefined {
    return this.#transport.info.pid;
  }

  /** True once the session was forgotten (its process is being closed). */
  get forgotten(): boolean {
    return this.#phase.phase === "forgotten";
  }

  /** Bytes of input taken and not yet written to the CLI. */
  get pendingInputBytes(): number {
    return this.#pendingBytes;
  }

  /** Its telemetry: the span from spawn to exit, and its id. */
  get trace(): SessionTrace {
    return this.#settings.trace;
  }

  /** The credential that created it (`Credential.owner`): the only one that may resume it. */
  get owner(): string {
    return this.#settings.owner;
  }

  /**
   * Tells whether a resume after `after` can be served.
   *
   * @param after The last output sequence number the client has.
   * @returns `"ok"`, `"gap"` (output it lacks was dropped) or `"ahead"` (more than was produced).
   */
  canResume(after: number): "ok" | "gap" | "ahead" {
    if (after > this.#outSeq) return "ahead";
    return this.#buffer.canReplayAfter(after) ? "ok" : "gap";
  }

  /**
   * Attaches a connection: replaces the current one (closed with
   * `CLOSE.replaced`), sends `ready`, then every held output after `after`.
   *
   * @param peer The new connection.
   * @param after The last output sequence the client has (0 for a new session).
   * @param resumed Whether this is a resume.
   */
  attach(peer: Peer, after: number, resumed: boolean): void {
    this.#clearTimer();
    const previous = this.#peer;
    this.#peer = peer;
    if (previous !== undefined && previous !== peer) {
      previous.end(CLOSE.replaced, "Another connection resumed the session");
    }
    const pid = this.#settings.exposePid ? this.pid : undefined;
    const { graceMs } = this.#settings;
    peer.sendText(text({
      t: "ready",
      session: this.id,
      resumed,
      inSeq: this.#applied,
      ...(pid !== undefined && { pid }),
      graceMs: graceMs === Infinity ? null : graceMs,
      ...(this.#gone && { gone: this.#gone }),
    }));
    const replay = this.#buffer.entriesAfter(after);
    for (const entry of replay) send(peer, entry);
    if (resumed) this.#settings.trace.resumed(after, replay.length);
    // An ended session waits for the acknowledgement of its exit, for the grace at most.
    if (this.#phase.phase === "exited") this.#startTimer();
  }

  /**
   * Before a connection resumes the session: takes its conversation back if
   * another relay sharing the store raised the fence meanwhile (see
   * `StoreLink.retake`); when it cannot (a relay in between ran turns this
   * CLI never had), the session ends at once and `forgotten` is true after.
   * Never rejects.
   *
   * @returns False when the store did not answer: the connection may not
   *   resume it yet (the session waits, as after a drop).
   */
  async retake(): Promise<boolean> {
    const store = this.#settings.store;
    if (store === undefined) return true;
    const known = await store.retake();
    if (store.fencedOff) this.#fencedOff();
    return known;
  }

  /**
   * Detaches a connection that closed. Without a `close` request, the
   * process is kept for the grace period.
   *
   * @param peer The connection.
   */
  detach(peer: Peer): void {
    if (this.#peer !== peer) return;
    this.#peer = undefined;
    if (this.forgotten) return;
    if (closeRequested(this.#phase) || !this.#settings.resumable) void this.forget();
    else {
      this.#settings.trace.disconnected();
      this.#startTimer();
    }
  }

  /**
   * No connection took the session after its start (its client went while
   * it woke, or asked for output never sent): it waits for a resume as after
   * a drop. Nothing changes when a connection holds it or it waits already.
   */
  unclaimed(): void {
    if (this.#peer !== undefined || this.#timer !== undefined || this.forgotten) return;
    if (this.#settings.resumable) this.#startTimer();
    else void this.forget();
  }

  /**
   * Takes an input line.
   *
   * @param seq Its input sequence number.
   * @param line The JSON text.
   * @returns `"gap"` when `seq` skips a number (a protocol error), `"full"` when taking it
   * would hold more than `maxPendingInputBytes` for the CLI (the line is not taken).
   */
  input(seq: number, line: string): InputResult {
    if (seq <= this.#received) {
      // A resend: already taken. Acknowledge again once written.
      if (seq <= this.#applied) this.#ack(seq);
      return "ok";
    }
    if (seq !== this.#received + 1) return "gap";
    const bytes = utf8Length(line) + 1;
    if (this.#pendingBytes + bytes > this.#settings.maxPendingInputBytes) return "full";
    this.#pendingBytes += bytes;
    this.#received = seq;
    const store = this.#settings.store;
    const from = this.#peer;
    this.#writing = this.#writing.then(async () => {
      if (
        store !== undefined &&
        !(await store.admitsInput(seq, (timeoutMs) => this.#answers(from, timeoutMs)))
      ) {
        // Another relay runs the conversation now: this session ends, the line unwritten and
        // unacknowledged (the client sends it again where it resumes).
        this.#pendingBytes -= bytes;
        return;
      }
      try {
        // A line the old relay's CLI took (resumed from the store) is not written again.
        if (store === undefined || !(await store.alreadyTaken(line))) {
          await this.#transport.write(line);
        }
      } catch {
        // The CLI has gone: the exit message tells the client.
      }
      this.#pendingBytes -= bytes;
      this.#applied = seq;
      this.#ack(seq, store?.applied(seq));
    });
    return "ok";
  }

  /* Whether the connection a line came on still holds the session and its client answers. */
  async #answers(from: Peer | undefined, timeoutMs: number): Promise<boolean> {
    return from !== undefined && this.#peer === from && await from.answers(timeoutMs) &&
      this.#peer === from;
  }

  /* Acknowledges input; with a record, once it holds the line (or its bound passed). */
  #ack(seq: number, recorded?: Promise<void>): void {
    if (this.#settings.store?.records !== true) {
      this.#peer?.sendText(text({ t: "ack", seq }));
      return;
    }
    this.#acks = this.#acks.then(() => recorded).then(() => {
      if (!this.forgotten) this.#peer?.sendText(text({ t: "ack", seq }));
    });
  }

  /**
   * Takes the client's acknowledgement of output.
   *
   * @param seq The highest output sequence number the client has.
   * @returns False when `seq` is beyond what was produced (a protocol error).
   */
  ack(seq: number): boolean {
    if (seq > this.#outSeq) return false;
    this.#buffer.ack(seq);
    if (!this.#windowFull()) this.#wake();
    const phase = this.#phase;
    if (phase.phase === "exited" && seq >= phase.exitSeq) {
      const peer = this.#peer;
      void this.forget();
      peer?.end(CLOSE.normal, "Session ended");
    }
    return true;
  }

  /** Ends the CLI's input (stdin EOF). */
  endInput(): void {
    this.#writing = this.#writing.then(() => this.#transport.endInput()).catch(() => {});
  }

  /** Closes the CLI at the client's request; the exit message follows. */
  requestClose(): void {
    const phase = this.#phase;
    if (phase.phase === "running") this.#phase = CLOSING;
    else if (phase.phase === "exited") this.#phase = { ...phase, closeRequested: true };
    this.#transport.close().catch(() => {});
  }

  /**
   * Forgets the session: closes the CLI (if it still runs), drops the
   * buffer, and reports the end to the relay. Idempotent.
   *
   * @param leave What the store's record says afterwards: `closed` (the
   *   conversation ended), `hibernated`, or `keep` (as it was: the relay
   *   shuts down, and another relay may resume it).
   * @returns Resolves when the CLI is reaped and the pumps have ended.
   */
  forget(leave: RecordState | "keep" = "closed"): Promise<void> {
    if (this.#phase.phase === "forgotten") return this.#phase.done;
    const done = Promise.withResolvers<void>();
    this.#phase = { phase: "forgotten", done: done.promise };
    this.#clearTimer();
    this.#wake();
    done.resolve(this.#retire(leave));
    this.#settings.onForget(this, done.promise);
    return done.promise;
  }

  /* Closes the CLI, waits for the pumps, the writes and the record; drops the buffer. */
  async #retire(leave: RecordState | "keep"): Promise<void> {
    this.#settings.store?.stopInput();
    await this.#transport.close().catch(() => {});
    await this.#run;
    await this.#writing;
    await this.#acks;
    await this.#settings.store?.closeRecord(leave === "keep" ? undefined : leave);
    this.#buffer.clear();
  }

  async #pump(): Promise<void> {
    const [exit] = await Promise.all([
      this.#transport.closed,
      this.#pumpStdout(),
      this.#pumpStderr(),
    ]);
    // The store gets the transcript's last lines before the client hears of the exit, and, when
    // the client closed it, the conversation's end: no relay resumes it after.
    await this.#settings.store?.closeMirror();
    if (this.#phase.phase === "closing") await this.#settings.store?.mark("closed");
    this.#settings.trace.exited(exit);
    const seq = ++this.#outSeq;
    this.#emit({ seq, frame: text({ t: "exit", seq, exit }) });
    if (this.#phase.phase === "forgotten") return;
    this.#phase = { phase: "exited", exitSeq: seq, closeRequested: closeRequested(this.#phase) };
    // An ended session waits for the acknowledgement of its exit, for the grace at most; a
    // detached one keeps the grace timer it already has.
    if (this.#peer !== undefined || this.#timer === undefined) this.#startTimer();
  }

  async #pumpStdout(): Promise<void> {
    const reader = this.#transport.readable.getReader();
    const store = this.#settings.store?.taps ? this.#settings.store : undefined;
    try {
      for (;;) {
        // Flow control: with half the buffer unacknowledged, stop reading until the client
        // acknowledges; the CLI then waits on its pipe. Stdout output is never dropped from
        // the buffer, so a resume always finds it, and memory stays bounded.
        if (this.#windowFull() && !this.forgotten) {
          const stall = this.#settings.trace.stalled(this.#buffer.bytes);
          while (this.#windowFull() && !this.forgotten) {
            this.#room = Promise.withResolvers<void>();
            await this.#room.promise;
          }
          stall();
        }
        const { done, value } = await reader.read();
        if (done) break;
        let bytes: Uint8Array | undefined = typeof value === "string"
          ? encoder.encode(value + "\n")
          : value;
        // With a store, mirror lines are taken out (and lines are split only then).
        if (store) {
          bytes = store.forward(bytes);
          // A result goes out once the store holds its turn (bounded).
          const stored = store.resultStored();
          if (stored) await stored;
          // Another relay took the conversation over: a result the store refused never goes out
          // (the client, if still here, sees the exit and fails the turn, typed).
          if (store.fencedOff) break;
        }
        if (bytes === undefined) continue;
        const seq = ++this.#outSeq;
        this.#emit({ seq, frame: encodeOutput(seq, bytes) });
      }
    } catch {
      // The stream failed: the exit tells why.
    } finally {
      reader.releaseLock();
      const rest = store?.endOfOutput();
      if (rest !== undefined && !store?.fencedOff) {
        const seq = ++this.#outSeq;
        this.#emit({ seq, frame: encodeOutput(seq, rest) });
      }
    }
  }

  async #pumpStderr(): Promise<void> {
    const stderr = this.#transport.stderr;
    if (stderr === undefined) return;
    const reader = stderr.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const seq = ++this.#outSeq;
        this.#emit({ seq, frame: text({ t: "err", seq, line: value }) });
      }
    } catch {
      // As for stdout.
    } finally {
      reader.releaseLock();
    }
  }

  #windowFull(): boolean {
    return this.#buffer.bytes * 2 >= this.#settings.bufferBytes;
  }

  #wake(): void {
    const room = this.#room;
    this.#room = undefined;
    room?.resolve();
  }

  #emit(entry: OutputEntry): void {
    if (this.#phase.phase === "forgotten") return;
    this.#buffer.push(entry);
    if (this.#peer !== undefined) send(this.#peer, entry);
  }

  #startTimer(): void {
    this.#clearTimer();
    const timer = this.#timer = deadline(this.#settings.graceMs);
    timer.signal.addEventListener("abort", () => {
      this.#timer = undefined;
      const peer = this.#peer;
      if (peer === undefined && this.#hibernate()) return;
      void this.forget();
      peer?.end(CLOSE.normal, "Session ended");
    }, { once: true });
  }

  /* The grace of a detached, running session ended: keep what a resume needs, close the CLI. */
  #hibernate(): boolean {
    const hibernation = this.#settings.hibernation;
    if (!hibernation || this.#phase.phase !== "running") return false;
    // What the buffer holds is what the client lacks; kept when it is small enough.
    const buffer = this.#buffer;
    const kept = buffer.bytes <= HIBERNATED_TAIL_BYTES;
    const removed = buffer.removedThrough;
    const tail = kept ? buffer.entriesAfter(removed) : [];
    const outSeq = this.#outSeq;
    const applied = this.#applied;
    const gone = this.forget("hibernated");
    const { cliSessionId, options, spawn, cwd } = hibernation;
    hibernation.keep({
      owner: this.#settings.owner,
      options: resumeOptions(options, cliSessionId),
      cliSessionId,
      spawn,
      cwd,
      epoch: this.#settings.store?.epoch ?? 0,
      restore: { id: this.id, outSeq, keptAfter: kept ? removed : outSeq, applied, tail },
      gone,
    });
    return true;
  }

  #clearTimer(): void {
    this.#timer?.[Symbol.dispose]();
    this.#timer = undefined;
  }
}

/** The text of a message to the client. */
function text(message: RelayMessage): string {
  return JSON.stringify(message);
}

function send(peer: Peer, entry: OutputEntry): void {
  if (typeof entry.frame === "string") peer.sendText(entry.frame);
  else peer.sendBinary(entry.frame);
}

/** A new session token: 32 random bytes, base64url. */
export function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}
