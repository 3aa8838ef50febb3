// This module is browser compatible.
/**
 * The transport conformance suite's harness: opening a peer for one step
 * ({@linkcode withPeer}), the step's view of it ({@linkcode PeerSession}),
 * the lines of the peer protocol, and calls into the transport that turn a
 * synchronous throw into a contract failure. The reader of the peer's output
 * is in `_conformance_reader.ts`. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import type { TransportExit } from "../errors.ts";
import type { Transport } from "../transport/transport.ts";
import type { ConformancePeer } from "./transport_conformance.ts";
import { ContractTimeout, describeError, settle, show, within } from "./_conformance_assert.ts";
import { OutputReader } from "./_conformance_reader.ts";

/** The time bounds of a run, checked. */
export interface Bounds {
  readonly closeBoundMs: number;
  readonly timeoutMs: number;
}

/** One contract's check: it throws when the contract is broken. */
export type Check = (peer: PeerSession) => Promise<void>;

/** A line of the conformance peer protocol. */
export function op(name: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ type: "conformance", op: name, ...fields });
}

/** A frame the peer echoes back. */
export function echoFrame(fields: Record<string, unknown>): Record<string, unknown> {
  return { type: "conformance", op: "echo", ...fields };
}

/** Calls `transport.write(line)`; a synchronous throw becomes a rejection that says so. */
export function callWrite(transport: Transport, line: string): Promise<void> {
  return call("write()", () => transport.write(line));
}

/** Calls `transport.endInput()`; a synchronous throw becomes a rejection that says so. */
export function callEndInput(transport: Transport): Promise<void> {
  return call("endInput()", () => transport.endInput());
}

/** Calls `transport.close()`; a throw or a rejection becomes a rejection that says so. */
export function callClose(transport: Transport): Promise<TransportExit> {
  return call("close()", () => transport.close()).catch((error: unknown) => {
    throw new Error(`Expected close() to resolve; it rejected with ${describeError(error)}`, {
      cause: error,
    });
  });
}

/** Calls `transport[Symbol.asyncDispose]()`, which must exist. */
export function callDispose(transport: Transport): Promise<void> {
  const dispose = transport[Symbol.asyncDispose];
  if (typeof dispose !== "function") {
    return Promise.reject(new Error("Expected the transport to have [Symbol.asyncDispose]()"));
  }
  return call("[Symbol.asyncDispose]()", () => dispose.call(transport));
}

function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(
      new Error(`Expected ${what} to return a promise; it threw: ${describeError(error)}`, {
        cause: error,
      }),
    );
  }
}

/** One open peer, for one step: its transport, readers to clean up, bounds. */
export class PeerSession {
  readonly transport: Transport;
  readonly bounds: Bounds;
  #output: OutputReader | undefined;
  #readers: ReadableStreamDefaultReader<unknown>[] = [];

  constructor(transport: Transport, bounds: Bounds) {
    this.transport = transport;
    this.bounds = bounds;
  }

  /** The reader of `readable` (one per step, made on the first call). */
  output(): OutputReader {
    this.#output ??= new OutputReader(this.transport, this.bounds.timeoutMs);
    return this.#output;
  }

  /** Registers a reader to cancel when the step ends. */
  adopt<T>(reader: ReadableStreamDefaultReader<T>): ReadableStreamDefaultReader<T> {
    this.#readers.push(reader as ReadableStreamDefaultReader<unknown>);
    return reader;
  }

  /** A reader of `transport.stderr` (cancelled when the step ends), or undefined without one. */
  stderr(): ReadableStreamDefaultReader<string> | undefined {
    const stderr = this.transport.stderr;
    if (stderr === undefined) return undefined;
    if (typeof stderr?.getReader !== "function") {
      throw new Error(
        `Expected transport.stderr to be a ReadableStream; got ${describeError(stderr)}`,
      );
    }
    return this.adopt(stderr.getReader());
  }

  /** Writes a line; it must resolve in time. */
  async write(line: string): Promise<void> {
    const what = `write(${show(line, 80)}) to resolve`;
    await within(this.bounds.timeoutMs, what, callWrite(this.transport, line));
  }

  /** Awaits `closed`, bounded; a rejection is a contract failure. */
  async closed(what: string): Promise<TransportExit> {
    const outcome = await settle(within(this.bounds.timeoutMs, what, this.transport.closed));
    if (outcome.status === "fulfilled") return outcome.value;
    const reason = outcome.reason;
    if (reason instanceof ContractTimeout) throw reason;
    throw new Error(`Expected closed never to reject; it rejected with ${describeError(reason)}`, {
      cause: reason,
    });
  }

  /** Closes the transport and releases every reader, bounded; reports a failure to close. */
  async cleanUp(): Promise<void> {
    const closing = await settle(
      within(
        this.bounds.closeBoundMs,
        "close() at the end of the step to resolve",
        callClose(this.transport),
      ),
    );
    const readers = [...this.#readers];
    if (this.#output !== undefined) readers.push(this.#output.reader);
    for (const reader of readers) {
      const cancel = reader.cancel().catch(() => {});
      await settle(within(this.bounds.timeoutMs, "a reader to cancel", cancel));
    }
    if (closing.status === "rejected") throw closing.reason;
  }
}

/**
 * Opens a peer, runs `check` on it and always cleans up (close, cancel the
 * readers); throws the check's failure, else a failure to clean up.
 */
export async function withPeer(
  open: () => Promise<ConformancePeer>,
  bounds: Bounds,
  check: Check,
): Promise<void> {
  const peer = new PeerSession(await openPeer(open, bounds), bounds);
  let failed: { error: unknown } | undefined;
  try {
    await check(peer);
  } catch (error) {
    failed = { error };
  }
  try {
    await peer.cleanUp();
  } catch (error) {
    failed ??= { error };
  }
  if (failed !== undefined) throw failed.error;
}

async function openPeer(open: () => Promise<ConformancePeer>, bounds: Bounds): Promise<Transport> {
  let opening: Promise<ConformancePeer>;
  try {
    opening = Promise.resolve(open());
  } catch (error) {
    throw new Error(`Cannot open a conformance peer: open() threw: ${describeError(error)}`, {
      cause: error,
    });
  }
  const outcome = await settle(within(bounds.timeoutMs, "open() to resolve", opening));
  if (outcome.status === "rejected") {
    // A peer that opens late is closed, so nothing outlives the step.
    opening.then((late) => late?.transport?.close?.()).catch(() => {});
    throw new Error(`Cannot open a conformance peer: ${describeError(outcome.reason)}`, {
      cause: outcome.reason,
    });
  }
  const transport = outcome.value?.transport;
  const missing = ["write", "endInput", "close"].filter((name) =>
    typeof (transport as unknown as Record<string, unknown> | undefined)?.[name] !== "function"
  );
  if (transport === undefined || transport === null || missing.length > 0) {
    throw new Error(
      `Cannot use the opened peer: open() must resolve with { transport } where transport ` +
        `has write, endInput and close; missing ${missing.join(", ")}`,
    );
  }
  if (typeof transport.info?.kind !== "string" || transport.info.kind === "") {
    throw new Error(
      `Expected transport.info.kind to be a non-empty string; got ${describeError(transport.info)}`,
    );
  }
  return transport;
}
