/**
 * `DirectorySessionStore`: the conformance suite, a torn last line (crash
 * mid-write) skipped and cut off, key fields as safe file names (no path
 * outside the folder, long fields hashed with a sidecar), mtime from the
 * store's clock, two objects on one folder, a file rewritten behind the
 * index's back, bad options and refused permissions.
 *
 * @module
 */

import assert from "node:assert/strict";
import { isDuplexError } from "../../../../src/errors.ts";
import {
  DirectorySessionStore,
  type DirectoryStoreSkip,
} from "../../../../adapters/subprocess/store/directory_session_store.ts";
import { sessionStoreConformance } from "../../../../src/testing/session_store_conformance.ts";
import { makeTestDir } from "../_helpers.ts";

const KEY = { projectKey: "-home-me-app", sessionId: "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f" };

async function files(root: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${root}/${prefix}`)) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory) found.push(...await files(root, path));
    else found.push(path);
  }
  return found.sort();
}

Deno.test("DirectorySessionStore keeps the SessionStore contract", async (t) => {
  await sessionStoreConformance(t, async () => {
    const dir = await makeTestDir();
    return Object.assign(new DirectorySessionStore(dir), {
      [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
    });
  });
});

Deno.test("DirectorySessionStore skips a torn last line on load, counts it, and cuts it off", async () => {
  const dir = await makeTestDir();
  try {
    const skips: DirectoryStoreSkip[] = [];
    const store = new DirectorySessionStore(dir, { onSkip: (skip) => skips.push(skip) });
    await store.append(KEY, [{ type: "user", uuid: "a" }, { type: "user", uuid: "b" }]);
    const file = `${dir}/${KEY.projectKey}/${KEY.sessionId}.jsonl`;
    // A writer died mid-write: half a line, no newline.
    await Deno.writeTextFile(file, '{"type":"user","uuid":"c","message":{"ro', { append: true });
    assert.deepEqual((await store.load(KEY))!.map((e) => e.uuid), ["a", "b"]);
    assert.equal(store.skippedLines, 1);
    assert.deepEqual(skips.map((s) => [s.kind, s.bytes, s.file]), [["torn", 40, file]]);
    assert.match(skips[0]!.excerpt, /^\{"type":"user","uuid":"c"/);
    assert.deepEqual(skips[0]!.key, KEY);
    // The retry of the torn batch: c is stored once, the torn bytes are gone.
    await store.append(KEY, [{ type: "user", uuid: "c" }]);
    const text = await Deno.readTextFile(file);
    assert.ok(text.endsWith("\n"));
    assert.deepEqual(text.trimEnd().split("\n").map((line) => JSON.parse(line).uuid), [
      "a",
      "b",
      "c",
    ]);
    // A complete last line without its newline is not committed either.
    await Deno.writeTextFile(file, '{"type":"user","uuid":"d"}', { append: true });
    assert.deepEqual((await store.load(KEY))!.map((e) => e.uuid), ["a", "b", "c"]);
    // A broken line in the middle is skipped and reported; the rest loads.
    await Deno.writeTextFile(file, "\nnot json\n", { append: true });
    await store.append(KEY, [{ type: "user", uuid: "e" }]);
    assert.deepEqual((await store.load(KEY))!.map((e) => e.uuid), ["a", "b", "c", "d", "e"]);
    assert.ok(skips.some((s) => s.kind === "noise"), skips.map((s) => s.kind).join());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DirectorySessionStore names files after key fields that cannot leave its folder", async () => {
  const parent = await makeTestDir();
  try {
    const dir = `${parent}/store`;
    const store = new DirectorySessionStore(dir);
    const long = "é".repeat(100);
    const keys = [
      KEY,
      { ...KEY, subpath: "subagents/agent-a1" },
      { projectKey: "../../escape", sessionId: "../../../etc/passwd" },
      { projectKey: "/abs", sessionId: "." },
      { projectKey: "Case", sessionId: "x" },
      { projectKey: "case", sessionId: "x" },
      { projectKey: long, sessionId: long },
      { projectKey: long, sessionId: long, subpath: long },
    ];
    for (const [i, key] of keys.entries()) await store.append(key, [{ type: "x", i }]);
    assert.deepEqual(
      await files(parent),
      (await files(parent)).filter((f) => f.startsWith("store/")),
    );
    const names = await files(dir);
    assert.ok(names.includes(`${KEY.projectKey}/${KEY.sessionId}.jsonl`), "readable for CLI keys");
    assert.ok(names.includes(`${KEY.projectKey}/${KEY.sessionId}/subagents%2Fagent-a1.jsonl`));
    assert.ok(
      names.includes("%2E%2E%2F%2E%2E%2Fescape/%2E%2E%2F%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.jsonl"),
    );
    assert.ok(
      names.includes("%43ase/x.jsonl") && names.includes("case/x.jsonl"),
      "case kept apart",
    );
    // The long key: a hash per field, each with a sidecar holding the field.
    const hashed = names.filter((name) => name.includes("~"));
    assert.deepEqual(hashed.map((name) => name.replace(/~[0-9a-f]{64}/g, "~H")), [
      "~H.name",
      "~H/.clock",
      "~H/~H.jsonl",
      "~H/~H.name",
      "~H/~H.summary.json",
      "~H/~H/~H.jsonl",
      "~H/~H/~H.name",
    ]);
    assert.ok(names.every((name) => name.split("/").every((part) => part.length <= 200)));
    for (const [i, key] of keys.entries()) {
      assert.deepEqual(await store.load(key), [{ type: "x", i }]);
    }
    assert.deepEqual((await store.listSessions(long)).map((s) => s.sessionId), [long]);
    assert.deepEqual(await store.listSubkeys({ projectKey: long, sessionId: long }), [long]);
    // Files of another making in the folder are not sessions.
    await Deno.writeTextFile(`${dir}/${KEY.projectKey}/notes.txt`, "x");
    await Deno.writeTextFile(`${dir}/${KEY.projectKey}/%61bc.jsonl`, "{}\n"); // not canonical
    await Deno.writeTextFile(`${dir}/${KEY.projectKey}/~ff.jsonl`, "{}\n"); // no sidecar
    assert.deepEqual((await store.listSessions(KEY.projectKey)).map((s) => s.sessionId), [
      KEY.sessionId,
    ]);
    await store.delete({ projectKey: long, sessionId: long });
    assert.equal(await store.load({ projectKey: long, sessionId: long, subpath: long }), null);
    assert.deepEqual(
      (await files(dir)).filter((n) => n.includes("~H") || /~[0-9a-f]{64}/.test(n)).map((n) =>
        n.replace(/~[0-9a-f]{64}/g, "~H")
      ),
      ["~H.name", "~H/.clock"],
      "the session's files and sidecars are gone (the project's clock stays)",
    );
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("DirectorySessionStore stamps mtime from its clock, past the previous stamp", async () => {
  const dir = await makeTestDir();
  try {
    let now = 1_900_000_000_000.9;
    const store = new DirectorySessionStore(dir, { clock: () => now });
    await store.append(KEY, [{ type: "x" }]);
    const mtime = async () => (await store.listSessions(KEY.projectKey))[0]!.mtime;
    assert.equal(await mtime(), 1_900_000_000_000);
    await store.append(KEY, [{ type: "x" }]);
    assert.equal(await mtime(), 1_900_000_000_001, "the clock did not move");
    now -= 1000;
    await store.append(KEY, [{ type: "x" }]);
    assert.equal(await mtime(), 1_900_000_000_002, "the clock went back");
    now += 10_000;
    await store.append(KEY, [{ type: "x", uuid: "u" }]);
    assert.equal(await mtime(), 1_900_000_009_000);
    await store.append(KEY, [{ type: "x", uuid: "u" }]); // nothing new: not touched
    assert.equal(await mtime(), 1_900_000_009_000);
    const stat = await Deno.stat(`${dir}/${KEY.projectKey}/${KEY.sessionId}.jsonl`);
    assert.equal(stat.mtime?.getTime(), 1_900_000_009_000, "it is the file's own time");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DirectorySessionStore lists newest first: mtimes strictly increasing across the project", async (t) => {
  const dir = await makeTestDir();
  try {
    const frozen = 1_900_000_000_000;
    await t.step("the conformance suite with a clock that never moves", async (t) => {
      let n = 0;
      await sessionStoreConformance(t, () =>
        new DirectorySessionStore(`${dir}/suite-${++n}`, {
          clock: () => frozen,
        }));
    });
    await t.step("two objects on one folder, one millisecond, many keys", async () => {
      const [a, b] = [0, 1].map(() =>
        new DirectorySessionStore(`${dir}/two`, { clock: () => frozen })
      );
      const key = (id: string) => ({ projectKey: KEY.projectKey, sessionId: id });
      for (const id of ["b", "c", "d", "b"]) await a!.append(key(id), [{ type: "x" }]);
      await b!.append(key("a"), [{ type: "x" }]);
      await b!.append({ ...key("c"), subpath: "subagents/agent-1" }, [{ type: "x" }]); // not listed
      await a!.append(key("d"), [{ type: "x" }]);
      const listed = await b!.listSessions(KEY.projectKey);
      assert.deepEqual(listed, [
        { sessionId: "d", mtime: frozen + 6 },
        { sessionId: "a", mtime: frozen + 4 },
        { sessionId: "b", mtime: frozen + 3 },
        { sessionId: "c", mtime: frozen + 1 },
      ]);
      await Promise.all(
        ["e", "f", "g", "h"].flatMap((id) =>
          [a!, b!].map((s) => s.append(key(id), [{ type: "x", id }]))
        ),
      );
      const mtimes = (await a!.listSessions(KEY.projectKey)).map((s) => s.mtime);
      assert.deepEqual(mtimes, [...mtimes].sort((x, y) => y - x));
      assert.equal(new Set(mtimes).size, 8, `one each: ${mtimes}`);
    });
    await t.step("a project of an earlier version: the clock starts past its files", async () => {
      const root = `${dir}/earlier`;
      const store = new DirectorySessionStore(root, { clock: () => frozen });
      await store.append({ ...KEY, sessionId: "ahead" }, [{ type: "x" }]);
      await Deno.remove(`${root}/${KEY.projectKey}/.clock`); // as the previous version left it
      const file = `${root}/${KEY.projectKey}/ahead.jsonl`;
      await Deno.utime(file, new Date(), new Date(frozen + 100));
      await store.append({ ...KEY, sessionId: "new" }, [{ type: "x" }]);
      assert.deepEqual(await store.listSessions(KEY.projectKey), [
        { sessionId: "new", mtime: frozen + 101 },
        { sessionId: "ahead", mtime: frozen + 100 },
      ]);
    });
    await t.step("files stamped alike by another program go by session id", async () => {
      const root = `${dir}/ties`;
      const store = new DirectorySessionStore(root);
      for (const id of ["b", "c", "a"]) {
        await store.append({ ...KEY, sessionId: id }, [{ type: "x" }]);
      }
      const same = new Date(frozen);
      for (const id of ["c", "a", "b"]) {
        await Deno.utime(`${root}/${KEY.projectKey}/${id}.jsonl`, same, same);
      }
      const listed = await store.listSessions(KEY.projectKey);
      assert.deepEqual(listed.map((s) => s.sessionId), ["a", "b", "c"]);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DirectorySessionStore: two objects on one folder, and a file rewritten behind one's back", async () => {
  const dir = await makeTestDir();
  try {
    const [a, b] = [new DirectorySessionStore(dir), new DirectorySessionStore(dir)];
    const batch = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ type: "x", uuid: `u${i}` }));
    await Promise.all([
      a.append(KEY, batch(50)),
      b.append(KEY, batch(60)),
      a.append(KEY, batch(40)),
    ]);
    assert.deepEqual((await a.load(KEY))!.map((e) => e.uuid), batch(60).map((e) => e.uuid));
    // b deletes and re-imports less; a's index of the old file must not hide entries.
    await b.delete(KEY);
    await b.append(KEY, batch(3));
    await a.append(KEY, batch(5));
    assert.deepEqual((await a.load(KEY))!.map((e) => e.uuid), ["u0", "u1", "u2", "u3", "u4"]);
    // The same bytes written anew by hand (same size, new file): still right.
    const file = `${dir}/${KEY.projectKey}/${KEY.sessionId}.jsonl`;
    const text = await Deno.readTextFile(file);
    await Deno.remove(file);
    await Deno.writeTextFile(file, text.replace('"u4"', '"v4"'));
    await a.append(KEY, [{ type: "x", uuid: "u4" }]);
    assert.deepEqual((await a.load(KEY))!.map((e) => e.uuid), ["u0", "u1", "u2", "u3", "v4", "u4"]);
    const none = new DirectorySessionStore(dir, { indexCacheKeys: 0 });
    await none.append(KEY, [{ type: "x", uuid: "u0" }, { type: "x", uuid: "w" }]);
    assert.equal((await none.load(KEY))!.length, 7);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DirectorySessionStore checks its options and input", async () => {
  assert.throws(() => new DirectorySessionStore(""), TypeError);
  assert.throws(() => new DirectorySessionStore("x", { lockTimeoutMs: 0 }), RangeError);
  assert.throws(() => new DirectorySessionStore("x", { maxLineBytes: 1.5 }), RangeError);
  assert.throws(() => new DirectorySessionStore("x", { indexCacheKeys: -1 }), RangeError);
  assert.throws(() => new DirectorySessionStore("x", { clock: 1 as never }), TypeError);
  const store = new DirectorySessionStore(".cache/test-tmp/never-created");
  assert.ok(store.dir.startsWith("/") && store.dir.endsWith("/.cache/test-tmp/never-created"));
  await assert.rejects(store.append({ ...KEY, subpath: "" }, []), TypeError);
  await assert.rejects(store.append(KEY, [{ uuid: "no type" } as never]), TypeError);
  assert.equal(await store.load(KEY), null);
  assert.deepEqual(await store.listSessions(KEY.projectKey), []);
  assert.deepEqual(await store.listSubkeys(KEY), []);
  const withSubpath = { ...KEY, subpath: "" };
  assert.deepEqual(await store.listSubkeys(withSubpath), [], "a subpath beside it is not read");
  await assert.rejects(store.listSubkeys({ ...KEY, sessionId: "" }), TypeError);
  await store.delete(KEY);
  await store.append(KEY, []);
  await assert.rejects(
    Deno.stat(store.dir),
    Deno.errors.NotFound,
    "an empty append creates nothing",
  );
});

Deno.test({
  name: "DirectorySessionStore names the flag when Deno may not write its folder",
  permissions: { read: ["."], write: false },
  async fn() {
    const store = new DirectorySessionStore(".cache/test-tmp/no-write");
    await assert.rejects(
      store.append(KEY, [{ type: "x" }]),
      (error: unknown) =>
        isDuplexError(error, "not_permitted") && /--allow-write=\/.*no-write/.test(error.message),
    );
  },
});

Deno.test("DirectorySessionStore with lockTimeoutMs: Infinity waits for a held lock, however long", async () => {
  const dir = await makeTestDir();
  try {
    const store = new DirectorySessionStore(dir, { lockTimeoutMs: Infinity });
    await store.append(KEY, [{ type: "x", uuid: "first" }]);
    // Another open file description holds the lock (flock conflicts within a process too).
    const holder = await Deno.open(`${dir}/${KEY.projectKey}/${KEY.sessionId}.jsonl`, {
      read: true,
      append: true,
    });
    let outcome = "pending";
    let waiting: Promise<void>;
    try {
      await holder.lock(true);
      waiting = store.append(KEY, [{ type: "x", uuid: "after" }]).then(
        () => void (outcome = "done"),
        (error: unknown) => void (outcome = `failed: ${error}`),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(outcome, "pending", "no timer for an unbounded wait");
    } finally {
      holder.close(); // frees the lock
    }
    await waiting;
    assert.equal(outcome, "done");
    assert.deepEqual((await store.load(KEY))!.map((e) => e.uuid), ["first", "after"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
