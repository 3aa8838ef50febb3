// This module is browser compatible.
/* Runs the operations of one key one after the other, in call order (a
 * failed one does not stop the next); keys run independently. The built-in
 * stores use it so that appends to one transcript land in call order. */

/** A queue per key; a key's entry goes once its last operation settles. */
export class KeyQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier operation on `key`, and settles as it does. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const next = (this.#tails.get(key) ?? Promise.resolve()).then(fn, fn);
    const settled = next.catch(() => {});
    this.#tails.set(key, settled);
    settled.then(() => {
      if (this.#tails.get(key) === settled) this.#tails.delete(key);
    });
    return next;
  }
}
