/* A project's clock in a DirectorySessionStore: `<project>/.clock` (no key
 * field makes a name with a `.`), whose modification time is the last mtime
 * stamped in the project. Every append stamps its transcript under the
 * clock's exclusive `flock`, one millisecond past that time at least, so
 * mtimes are strictly increasing across the project, in stamp order, for
 * every store object and process on the folder (the kernel frees the lock of
 * a process that dies). The lock is held for the stamp alone: a stat and two
 * utimes.
 *
 * A clock never set (empty: a project of an earlier version, or new) starts
 * at the newest mtime of the project's main transcripts.
 *
 * The clock is opened through no link below the store's root (_no_links.ts). */

import { lockWithin } from "./_jsonl_file.ts";
import { openInside } from "./_no_links.ts";

/** The clock's file name in a project's folder. */
export const CLOCK_FILE = ".clock";

/** What a stamp needs. */
export interface ProjectStamp {
  /** The store's root, which no link below may leave. */
  readonly root: string;
  /** The project's folder (it exists). */
  readonly projectDir: string;
  /** The transcript being stamped (left out of a first clock's start). */
  readonly file: string;
  /** The store's clock, in integer milliseconds. */
  readonly now: number;
  /** The least stamp the transcript takes (one past its previous one), else 0. */
  readonly least: number;
  /** How long to wait for another writer's stamp. */
  readonly lockTimeoutMs: number;
  /** Sets the transcript's mtime (under the clock's lock). */
  readonly apply: (mtime: number) => Promise<void>;
}

/* The newest mtime of the project's `.jsonl` files but `except`, or 0. */
async function newestIn(dir: string, except: string): Promise<number> {
  let newest = 0;
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (!entry.isFile || !entry.name.endsWith(".jsonl") || path === except) continue;
    try {
      newest = Math.max(newest, Math.floor((await Deno.lstat(path)).mtime?.getTime() ?? 0));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error; // deleted meanwhile
    }
  }
  return newest;
}

/**
 * Stamps a transcript past every earlier stamp of its project: the largest
 * of the store's clock, the clock file's time plus one, and `least`.
 *
 * @returns The stamp.
 * @throws {DuplexError} `timeout` when the clock stays locked past `lockTimeoutMs`.
 */
export async function stampInProject(stamp: ProjectStamp): Promise<number> {
  const path = `${stamp.projectDir}/${CLOCK_FILE}`;
  const clock = await openInside({
    root: stamp.root,
    path,
    action: "append to the store",
    read: true,
    write: true,
    create: true,
  });
  let locked = false;
  try {
    await lockWithin(clock, path, stamp.lockTimeoutMs);
    locked = true;
    const info = await clock.stat();
    const last = info.size > 0
      ? Math.floor(info.mtime?.getTime() ?? 0)
      : await newestIn(stamp.projectDir, stamp.file);
    const mtime = Math.max(stamp.now, last + 1, stamp.least);
    await stamp.apply(mtime);
    if (info.size === 0) await clock.write(new Uint8Array([10])); // set: its time counts
    await clock.utime(new Date(), new Date(mtime));
    return mtime;
  } finally {
    if (locked) clock.close(); // else lockWithin closes it once the lock request settles
  }
}
