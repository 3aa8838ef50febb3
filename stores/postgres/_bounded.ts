// This module is browser compatible.
/* Every call to the client is bounded by timeoutMs, and its failures are DuplexErrors. */

import { abortable, deadline } from "../../src/_deadline.ts";
import { DuplexError, type DuplexErrorKind } from "../../src/errors.ts";

/*
 * The kind of a failure of the server or the driver (refused or dropped
 * connection, an SQL error): the operation was ended by something other than
 * the caller.
 */
const FAILED: DuplexErrorKind = "store_failed";

/* SQLSTATE undefined_table: the schema was not created. */
const UNDEFINED_TABLE = "42P01";
/* SQLSTATE undefined_column: the tables are an earlier version's (no keys' seq). */
const UNDEFINED_COLUMN = "42703";

/** What an operation is, for its messages: "append to", "load from", …. */
export interface Operation {
  /** "append to", "load from", "list the sessions of", …. */
  readonly verb: string;
  /** "append to the PostgreSQL session store", for argument errors. */
  readonly action: string;
  /** The table, for the message. */
  readonly label: string;
  /** The bound of the whole call (what the message names). */
  readonly timeoutMs: number;
  /** When the call must be over (`performance.now()` time). */
  readonly deadline: number;
  /** True when the tables are created on first use (else a missing table or column gets a hint). */
  readonly createSchema: boolean;
}

/* With createSchema: false, what to do about a missing table or column. */
const HINTS = new Map<unknown, string>([
  [
    UNDEFINED_TABLE,
    ": create the tables first (postgresSessionStoreSchema()) or pass createSchema: true",
  ],
  [
    UNDEFINED_COLUMN,
    ": the tables are of an earlier version of the store; migrate them " +
    "(postgresSessionStoreSchema() adds what is missing) or pass createSchema: true",
  ],
]);

function driverError(error: unknown): { text: string; code: unknown } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { text: error.message || error.name, code };
  }
  return { text: String(error), code: undefined };
}

/**
 * Wraps a driver's error in a DuplexError that names the operation and the
 * table (the driver's error is the `cause`).
 */
export function failure(op: Operation, error: unknown): DuplexError {
  if (error instanceof DuplexError) return error;
  const { text, code } = driverError(error);
  const hint = op.createSchema ? "" : HINTS.get(code) ?? "";
  const shown = typeof code === "string" && !text.includes(code) ? ` (${code})` : "";
  return new DuplexError(
    FAILED,
    `Cannot ${op.verb} the PostgreSQL session store (table ${op.label}): ${text}${shown}${hint}`,
    { cause: error },
  );
}

/**
 * Runs `start()` (a query or a transaction) by `op.deadline`: past it,
 * rejects with a `timeout` DuplexError and cancels the query if it can (what
 * was sent may still take effect); a rejection becomes {@linkcode failure}.
 */
export async function bounded<T>(
  op: Operation,
  start: () => PromiseLike<T> & { cancel?(): void },
): Promise<T> {
  let pending: PromiseLike<T> & { cancel?(): void };
  try {
    pending = start();
  } catch (error) {
    throw failure(op, error);
  }
  using limit = deadline(Math.max(0, op.deadline - performance.now()), {
    reason: () =>
      new DuplexError(
        "timeout",
        `Cannot ${op.verb} the PostgreSQL session store (table ${op.label}): no answer ` +
          `within ${op.timeoutMs} ms (timeoutMs); the server may be unreachable or busy, ` +
          `and what was sent may still take effect`,
      ),
  });
  limit.signal.addEventListener("abort", () => cancelQuietly(pending), { once: true });
  try {
    // abortable() also keeps a late rejection from going unhandled.
    return await abortable(Promise.resolve(pending), limit.signal);
  } catch (error) {
    throw failure(op, error);
  }
}

/* A query as postgres.js 3 makes it: `cancel()` calls `canceller(query)` once. */
interface Cancellable {
  cancel?(): unknown;
  canceller?: ((query: unknown) => unknown) | null;
}

/*
 * Cancels a query, best effort, leaving no rejection unhandled. postgres.js 3's
 * `Query.cancel()` drops the promise of its cancel request (a connection of its own), so a
 * cancel that cannot connect (the server restarting) rejected with no handler, which ends a
 * Deno process (found by the fleet soak: a relay died of `read ECONNRESET` as PostgreSQL
 * restarted). Its `canceller`, called as `cancel()` calls it, hands that promise back.
 */
function cancelQuietly(pending: Cancellable): void {
  try {
    const canceller = pending.canceller;
    let outcome: unknown;
    if (typeof canceller === "function") {
      pending.canceller = null;
      outcome = canceller(pending);
    } else {
      outcome = pending.cancel?.();
    }
    if (typeof (outcome as PromiseLike<unknown> | undefined)?.then === "function") {
      (outcome as PromiseLike<unknown>).then(undefined, () => {});
    }
  } catch { /* cancelling is best effort */ }
}
