/**
 * `DirectorySessionStore` across processes: two processes appending the
 * same entries to one key store each uuid once (and every entry without
 * uuid); a process holding a file's lock makes an append wait, bounded by
 * `lockTimeoutMs`, and its death (SIGKILL) frees the lock; two processes
 * appending to sessions of one project stamp each its own mtime.
 *
 * @module
 */

import assert from "node:assert/strict";
import { isDuplexError } from "../../../../src/errors.ts";
import { DirectorySessionStore } from "../../../../adapters/subprocess/store/directory_session_store.ts";
import { makeTestDir } from "../_helpers.ts";
import { batchOf, SHARED_KEY } from "./_store_child.ts";

const CHILD = new URL("./_store_child.ts", import.meta.url).pathname;

function child(args: string[], dir: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      "--quiet",
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      CHILD,
      ...args,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

async function firstLine(process: Deno.ChildProcess): Promise<string> {
  const reader = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  reader.releaseLock();
  return text.trim();
}

Deno.test("DirectorySessionStore: two processes appending to one key store each uuid once", async () => {
  const dir = await makeTestDir();
  try {
    const batches = 150;
    const writers = [
      child(["append", dir, "a", String(batches)], dir),
      child(["append", dir, "b", String(batches)], dir),
    ];
    const statuses = await Promise.all(writers.map(async (w) => {
      await w.stdout.cancel();
      return await w.status;
    }));
    assert.deepEqual(statuses.map((s) => s.code), [0, 0]);
    const store = new DirectorySessionStore(dir);
    const entries = (await store.load(SHARED_KEY))!;
    const uuids = entries.flatMap((e) => e.uuid === undefined ? [] : [e.uuid]);
    assert.equal(new Set(uuids).size, uuids.length, "no uuid twice");
    const expected = new Set(
      ["a", "b"].flatMap((w) => Array.from({ length: batches }, (_, i) => batchOf(w, i))).flat()
        .flatMap((e) => e.uuid === undefined ? [] : [e.uuid]),
    );
    assert.deepEqual(new Set(uuids), expected, "every uuid once");
    assert.equal(entries.filter((e) => e.uuid === undefined).length, 2 * batches, "every tag");
    assert.equal(store.skippedLines, 0, "no torn or broken line");
    // Each writer's own entries are in its call order.
    for (const w of ["a", "b"]) {
      const own = uuids.filter((u) => u.startsWith(`${w}-`));
      assert.deepEqual(own, Array.from({ length: batches }, (_, i) => `${w}-${i}`));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DirectorySessionStore: two processes appending to sessions of one project stamp each its own mtime", async () => {
  const dir = await makeTestDir();
  try {
    const count = 60;
    const writers = ["a", "b"].map((w) => child(["sessions", dir, w, String(count)], dir));
    const statuses = await Promise.all(writers.map(async (w) => {
      await w.stdout.cancel();
      return await w.status;
    }));
    assert.deepEqual(statuses.map((s) => s.code), [0, 0]);
    const listed = await new DirectorySessionStore(dir).listSessions(SHARED_KEY.projectKey);
    assert.equal(listed.length, 2 * count);
    const mtimes = listed.map((s) => s.mtime);
    assert.ok(mtimes.every((m, i) => i === 0 || m < mtimes[i - 1]!), `one each: ${mtimes}`);
    for (const w of ["a", "b"]) {
      const own = listed.filter((s) => s.sessionId.startsWith(`${w}-`)).map((s) => s.sessionId);
      assert.deepEqual(own, Array.from({ length: count }, (_, i) => `${w}-${count - 1 - i}`));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DirectorySessionStore: another process's lock makes an append wait; its death frees it", async () => {
  const dir = await makeTestDir();
  const store = new DirectorySessionStore(dir, { lockTimeoutMs: 300 });
  const key = { projectKey: "-p", sessionId: "s" };
  await store.append(key, [{ type: "x", uuid: "first" }]);
  const file = `${dir}/-p/s.jsonl`;
  const holder = child(["hold", file], dir);
  try {
    assert.equal(await firstLine(holder), "locked");
    const started = Date.now();
    await assert.rejects(
      store.append(key, [{ type: "x", uuid: "timed-out" }]),
      (error: unknown) =>
        isDuplexError(error, "timeout") && /lockTimeoutMs/.test(error.message) &&
        error.message.includes(file),
    );
    assert.ok(Date.now() - started >= 290);
    const patient = new DirectorySessionStore(dir, { lockTimeoutMs: 20_000 });
    let done = false;
    const waiting = patient.append(key, [{ type: "x", uuid: "after" }]).then(() => done = true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(done, false, "the append waits while the other process holds the lock");
    holder.kill("SIGKILL");
    await holder.status;
    await waiting;
    assert.deepEqual((await store.load(key))!.map((e) => e.uuid), ["first", "after"]);
    // The timed-out append's lock request was granted once free, then released.
    await store.append(key, [{ type: "x", uuid: "last" }]);
    assert.deepEqual((await store.load(key))!.map((e) => e.uuid), ["first", "after", "last"]);
  } finally {
    try {
      holder.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await holder.status;
    await holder.stdout.cancel().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
