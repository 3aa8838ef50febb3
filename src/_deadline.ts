// This module is browser compatible.
/*
 * Deadlines as signals: the one place that turns a `…Ms` value into a timer.
 *
 * - `checkMs` accepts 1 .. 2^31-1 milliseconds, or `Infinity` (no timer at all).
 *   Runtimes clamp a longer delay to about 1 ms, so a larger finite value would
 *   fire at once; it is refused with a RangeError instead.
 * - `deadline` is a disposable signal that aborts after `ms` (with the reason the
 *   caller chose) or when the caller's own signal aborts (with its reason,
 *   unchanged). Disposing it clears the timer, so nothing is left pending.
 * - `sleep` waits `ms`, or rejects with the signal's reason.
 * - `abortable` settles with a promise, or rejects with the signal's reason first.
 */

/** The longest delay a runtime's timer honours (a longer one fires after ~1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Checks a duration option and returns it.
 *
 * @param value The value given.
 * @param what Where it was given, for the message: `Cannot start a session: controlTimeoutMs`.
 * @param min The smallest value allowed (0 for waits that may be skipped).
 * @throws {RangeError} For anything but a number from `min` to 2^31-1, or `Infinity`.
 */
export function checkMs(value: unknown, what: string, min = 1): number {
  if (
    typeof value === "number" &&
    (value === Infinity || (value >= min && value <= MAX_TIMER_MS))
  ) {
    return value;
  }
  throw new RangeError(
    `${what} must be a number of milliseconds from ${min} to ${MAX_TIMER_MS}, or Infinity, ` +
      `got ${typeof value === "number" ? value : typeof value}`,
  );
}

/** Options of {@linkcode deadline}. */
export interface DeadlineOptions {
  /** The caller's signal: aborting it aborts the deadline with its reason. */
  readonly signal?: AbortSignal | undefined;
  /** Makes the reason the deadline aborts with when its time is up. */
  readonly reason?: () => unknown;
}

/** A signal with a time limit; dispose it to clear the timer. */
export interface Deadline extends Disposable {
  /** Aborts when the time is up or the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** True when the time ran out (not the caller's signal). */
  readonly expired: boolean;
}

/**
 * A signal that aborts after `ms` milliseconds, or with the caller's signal.
 *
 * @param ms A checked duration; `Infinity` sets no timer.
 * @param options The caller's signal and the reason to abort with on time.
 */
export function deadline(ms: number, options: DeadlineOptions = {}): Deadline {
  const { signal } = options;
  if (ms === Infinity) {
    const own = signal ?? new AbortController().signal;
    return { signal: own, expired: false, [Symbol.dispose]() {} };
  }
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(
      options.reason?.() ?? new DOMException("The operation timed out", "TimeoutError"),
    );
  }, ms);
  const combined = signal ? AbortSignal.any([controller.signal, signal]) : controller.signal;
  return {
    signal: combined,
    get expired(): boolean {
      return expired;
    },
    [Symbol.dispose](): void {
      clearTimeout(timer);
    },
  };
}

/**
 * Waits `ms` milliseconds.
 *
 * @param ms A checked duration (`Infinity` waits for the signal only).
 * @param options A signal that ends the wait early.
 * @returns Resolves after `ms`; rejects with `signal.reason` when it aborts first.
 */
export function sleep(
  ms: number,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  const timer = ms === Infinity ? undefined : setTimeout(done, ms);
  const onAbort = (): void => {
    clearTimeout(timer);
    reject(signal?.reason);
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  function done(): void {
    signal?.removeEventListener("abort", onAbort);
    resolve();
  }
  return promise;
}

/**
 * Settles like `promise`, unless `signal` aborts first: then rejects with its reason
 * (`promise` goes on; its outcome is ignored).
 *
 * @param promise What to wait for.
 * @param signal What stops the wait.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  const { promise: outcome, resolve, reject } = Promise.withResolvers<T>();
  const onAbort = (): void => reject(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  return outcome;
}
