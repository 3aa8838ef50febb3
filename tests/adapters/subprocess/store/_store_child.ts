/**
 * A second process for the DirectorySessionStore tests.
 *
 * - `append <dir> <writer> <batches>`: appends `<batches>` batches to one key;
 *   batch `i` holds the shared entries `s<i>-1`, `s<i>-2` (every writer
 *   appends them), one of its own (`<writer>-<i>`) and one without uuid.
 * - `hold <file>`: takes the exclusive lock on `<file>`, prints `locked`,
 *   and waits to be killed.
 * - `sessions <dir> <writer> <count>`: appends one entry to each of `<count>`
 *   sessions `<writer>-<i>` of the project `-shared`, back to back.
 *
 * @module
 */

import { DirectorySessionStore } from "../../../../adapters/subprocess/store/directory_session_store.ts";

/** The key every writer appends to. */
export const SHARED_KEY = {
  projectKey: "-shared",
  sessionId: "2c8e6a6e-0000-4000-8000-000000000001",
};

/** The batch a writer appends as its `i`-th. */
export function batchOf(writer: string, i: number): { type: string; uuid?: string; w?: string }[] {
  return [
    { type: "x", uuid: `s${i}-1` },
    { type: "x", uuid: `s${i}-2` },
    { type: "x", uuid: `${writer}-${i}` },
    { type: "tag", w: writer },
  ];
}

if (import.meta.main) {
  const [mode, ...args] = Deno.args;
  if (mode === "append") {
    const [dir, writer, count] = args as [string, string, string];
    const store = new DirectorySessionStore(dir);
    for (let i = 0; i < Number(count); i++) await store.append(SHARED_KEY, batchOf(writer, i));
  } else if (mode === "sessions") {
    const [dir, writer, count] = args as [string, string, string];
    const store = new DirectorySessionStore(dir);
    for (let i = 0; i < Number(count); i++) {
      await store.append({ projectKey: SHARED_KEY.projectKey, sessionId: `${writer}-${i}` }, [
        { type: "x" },
      ]);
    }
  } else if (mode === "hold") {
    const file = await Deno.open(args[0]!, { read: true, append: true, create: true });
    await file.lock(true);
    await Deno.stdout.write(new TextEncoder().encode("locked\n"));
    setInterval(() => {}, 60_000); // keeps the process (and its lock) until killed
  }
}
