/**
 * A bounded map whose entries each belong to an owner, oldest dropped
 * first: at most `perOwner` entries per owner and `limit` in all, so that one
 * owner's churn drops its own entries, never another owner's.
 *
 * @module
 */

/**
 * What an add does when the map holds `limit` entries and the adding owner
 * holds none of them: `"refuse"` keeps nothing (every other owner is within
 * its bound, and none of theirs is dropped for it), `"oldest"` drops the
 * oldest entry of all.
 */
export type WhenFull = "refuse" | "oldest";

/** One entry: its owner and value. */
export interface Owned<V> {
  readonly owner: string;
  readonly value: V;
}

/** A key-ordered (oldest first) map of owned entries, bounded per owner and in all. */
export class OwnerLru<V> {
  readonly #limit: number;
  readonly #perOwner: number;
  readonly #whenFull: WhenFull;
  readonly #entries = new Map<string, Owned<V>>();
  /** Each owner's keys, oldest first. */
  readonly #byOwner = new Map<string, Set<string>>();

  /**
   * @param limit The most entries in all (0: none kept).
   * @param perOwner The most entries of one owner.
   * @param whenFull What an owner that holds nothing gets when the map is full.
   */
  constructor(limit: number, perOwner: number, whenFull: WhenFull) {
    this.#limit = limit;
    this.#perOwner = perOwner;
    this.#whenFull = whenFull;
  }

  /** How many entries are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The keys, oldest first: a copy, so the map may change while it is walked.
   *
   * @returns The keys.
   */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * The entry of a key.
   *
   * @param key The key.
   */
  get(key: string): Owned<V> | undefined {
    return this.#entries.get(key);
  }

  /**
   * Keeps an entry as the newest (replacing one of the same key). An owner at
   * its bound loses its own oldest entry; with the map full, so does the
   * adding owner, or, when it holds none, `whenFull` decides.
   *
   * @param key The key.
   * @param owner Its owner.
   * @param value Its value.
   * @returns False when it was not kept.
   */
  add(key: string, owner: string, value: V): boolean {
    if (this.#limit <= 0 || this.#perOwner <= 0) return false;
    this.delete(key);
    if ((this.#byOwner.get(owner)?.size ?? 0) >= this.#perOwner) this.#dropOldestOf(owner);
    if (this.#entries.size >= this.#limit) {
      if (this.#byOwner.has(owner)) this.#dropOldestOf(owner);
      else if (this.#whenFull === "refuse") return false;
      else this.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(key, { owner, value });
    let keys = this.#byOwner.get(owner);
    if (keys === undefined) this.#byOwner.set(owner, keys = new Set());
    keys.add(key);
    return true;
  }

  /**
   * Drops an entry (nothing when there is none).
   *
   * @param key The key.
   */
  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    const keys = this.#byOwner.get(entry.owner)!;
    keys.delete(key);
    if (keys.size === 0) this.#byOwner.delete(entry.owner);
  }

  /** Drops every entry. */
  clear(): void {
    this.#entries.clear();
    this.#byOwner.clear();
  }

  #dropOldestOf(owner: string): void {
    const oldest = this.#byOwner.get(owner)?.keys().next().value;
    if (oldest !== undefined) this.delete(oldest);
  }
}
