// This module is browser compatible.
/*
 * The hold on user lines of a session with a hook that asks for
 * onFailure: "block". Such a hook protects a turn only on a CLI that honours
 * it, and the CLI says so in its initialize reply
 * (`hook_on_failure_supported: true`, and not `hooks_applied: false`). So
 * until that reply came, no user line goes out (nor an interrupt, which would
 * overtake the lines it is meant to follow); once it confirmed, the waiting
 * lines go in the order they were sent, and later ones at once. When it does
 * not confirm (or initialize fails or times out), every waiting and later
 * line is refused with the same error and the session ends: no turn ever
 * runs unprotected. The official SDK (0.3.332) holds its prompts the same
 * way (`promptHold`, `hasHookSetToBlock()`).
 */

import { messageOf } from "../_values.ts";
import { DuplexError, isDuplexError } from "../errors.ts";
import type { HookEvent } from "../hooks/hooks.ts";

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class PromptHold {
  /** Settles like the initialize reply: rejects with the refusal when it does not confirm. */
  readonly confirmed: Promise<Record<string, unknown>>;
  readonly #waiters = new Set<Waiter>();
  #open = false;
  #refusal: DuplexError | undefined;

  /**
   * @param events The hook events that ask for `"block"` (not empty).
   * @param reply The CLI's reply to `initialize`.
   * @param onRefused Ends the session; called once, before the waiting lines are refused.
   */
  constructor(
    events: readonly HookEvent[],
    reply: Promise<Record<string, unknown>>,
    onRefused: (refusal: DuplexError) => void,
  ) {
    this.confirmed = reply.then((payload) => {
      const refusal = refusalOf(events, payload);
      if (refusal) throw refusal;
      this.#release(undefined);
      return payload;
    }).catch((error: unknown) => {
      const refusal = this.#refusal ?? unconfirmed(events, error);
      if (!this.#refusal) {
        this.#refusal = refusal;
        onRefused(refusal);
        this.#release(refusal);
      }
      throw refusal;
    });
    this.confirmed.catch(() => {});
  }

  /** Why the session refuses user lines, once the reply did not confirm. */
  get refusal(): DuplexError | undefined {
    return this.#refusal;
  }

  /**
   * Waits until a user line may be written.
   *
   * @param signal Withdraws the wait (rejects with its reason).
   * @returns `undefined` when the line may go at once; else a promise that
   *   resolves when the reply confirmed (the waiting lines resume in the
   *   order they waited) and rejects with the refusal when it did not.
   */
  wait(signal: AbortSignal | undefined): Promise<void> | undefined {
    if (this.#refusal) return Promise.reject(this.#refusal);
    if (this.#open) return undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const waiter: Waiter = {
      resolve,
      reject,
      signal,
      onAbort: () => {
        this.#waiters.delete(waiter);
        reject(signal?.reason);
      },
    };
    signal?.addEventListener("abort", waiter.onAbort, { once: true });
    this.#waiters.add(waiter);
    return promise;
  }

  /* Resumes (or refuses) every waiting line, in the order they waited, in one go. */
  #release(refusal: DuplexError | undefined): void {
    this.#open = refusal === undefined;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const waiter of waiters) {
      waiter.signal?.removeEventListener("abort", waiter.onAbort);
      if (refusal) waiter.reject(refusal);
      else waiter.resolve();
    }
  }
}

/* The hook events, for a message: `PreToolUse` or `PreToolUse, PostToolUse`. */
function named(events: readonly HookEvent[]): string {
  return `${events.length === 1 ? "a hook on" : "hooks on"} ${events.join(", ")}`;
}

/* The refusal of a reply that does not confirm the blocking hooks, or undefined when it does. */
function refusalOf(
  events: readonly HookEvent[],
  reply: Record<string, unknown>,
): DuplexError | undefined {
  const lacks = reply.hook_on_failure_supported !== true
    ? "lacks hook_on_failure_supported: true (a failing hook would only warn, not block)"
    : reply.hooks_applied === false
    ? "has hook_on_failure_supported but hooks_applied: false (the hooks would never run)"
    : undefined;
  if (lacks === undefined) return undefined;
  return new DuplexError(
    "unsupported",
    `Cannot start the session: ${named(events)} ask${events.length === 1 ? "s" : ""} for ` +
      `onFailure: "block", and the CLI's initialize reply ${lacks}; no prompt was sent and ` +
      `the session is closed. Upgrade claude, or remove onFailure: "block"`,
    { subtype: "initialize" },
  );
}

/* Initialize failed: the blocking hooks could not be confirmed, so the session refuses turns. */
function unconfirmed(events: readonly HookEvent[], error: unknown): DuplexError {
  if (isDuplexError(error) && ["unsupported", "closed", "process_exited"].includes(error.kind)) {
    return error; // the session ended for its own reason; its error says so
  }
  const message = messageOf(error);
  return new DuplexError(
    isDuplexError(error) ? error.kind : "control_failed",
    `Cannot start the session: ${named(events)} ask${events.length === 1 ? "s" : ""} for ` +
      `onFailure: "block", and initialize failed (${message}), so the CLI never confirmed ` +
      `it honours them; no prompt was sent and the session is closed`,
    {
      cause: error,
      subtype: "initialize",
      ...(isDuplexError(error) && error.errorCode !== undefined
        ? { errorCode: error.errorCode }
        : {}),
    },
  );
}
