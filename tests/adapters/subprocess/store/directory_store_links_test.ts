/**
 * `DirectorySessionStore` and links planted below its folder (issue 21,
 * finding 9): a linked `<project>/<session>.jsonl`, project folder, subkey
 * folder, `.clock` or `.name` sidecar, and a hard-linked transcript, are
 * refused (`store_failed`, naming the path) by every operation that would go
 * through them, and nothing outside the folder is written, read or deleted;
 * a root writable by group or others is refused unless `allowSharedRoot`;
 * a root the store makes is 0700, and a root that is itself a link is used.
 *
 * The links are made with `ln` (Deno.symlink needs unscoped permissions).
 *
 * @module
 */

import assert from "node:assert/strict";
import { isDuplexError } from "../../../../src/errors.ts";
import { DirectorySessionStore } from "../../../../adapters/subprocess/store/directory_session_store.ts";
import { makeTestDir } from "../_helpers.ts";

const KEY = { projectKey: "proj", sessionId: "sess" };
const SUB = { ...KEY, subpath: "subagents/agent-1" };
const ENTRY = [{ type: "user", uuid: "u1" }];

async function ln(...args: string[]): Promise<void> {
  const { code, stderr } = await new Deno.Command("ln", { args, stderr: "piped" }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
}

/* A store in `<parent>/store` (made by a first append) and a folder outside it. */
async function setUp(): Promise<
  { parent: string; root: string; outside: string; store: DirectorySessionStore }
> {
  const parent = await makeTestDir();
  const root = `${parent}/store`;
  const outside = `${parent}/outside`;
  await Deno.mkdir(outside);
  const store = new DirectorySessionStore(root);
  await store.append({ projectKey: "other", sessionId: "s" }, ENTRY);
  return { parent, root, outside, store };
}

function refused(path: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(isDuplexError(error, "store_failed"), String(error));
    assert.ok(error.message.includes(path), `${error.message} should name ${path}`);
    assert.match(error.message, /link/);
    return true;
  };
}

async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir), (entry) => entry.name)).sort();
}

Deno.test("DirectorySessionStore refuses a linked <project>/<session>.jsonl", async (t) => {
  const { parent, root, outside, store } = await setUp();
  try {
    await Deno.mkdir(`${root}/proj`);
    const file = `${root}/proj/sess.jsonl`;
    await t.step("to a file outside: not appended to, read or deleted", async () => {
      await Deno.writeTextFile(`${outside}/victim`, "precious\n");
      await ln("-s", `${outside}/victim`, file);
      await assert.rejects(store.append(KEY, ENTRY), refused(file));
      await assert.rejects(store.load(KEY), refused(file));
      await assert.rejects(store.delete(KEY), refused(file));
      assert.equal(await Deno.readTextFile(`${outside}/victim`), "precious\n");
      assert.ok((await Deno.lstat(file)).isSymlink);
      assert.deepEqual(await store.listSessions("proj"), [], "a link is not a session");
      await Deno.remove(file);
    });
    await t.step("dangling: no file is made outside", async () => {
      await ln("-s", `${outside}/made`, file);
      await assert.rejects(store.append(KEY, ENTRY), refused(file));
      await assert.rejects(Deno.lstat(`${outside}/made`), Deno.errors.NotFound);
      await Deno.remove(file);
    });
    await t.step("a hard link to a file outside is refused too", async () => {
      await ln(`${outside}/victim`, file);
      await assert.rejects(store.append(KEY, ENTRY), (error: unknown) => {
        assert.ok(isDuplexError(error, "store_failed"), String(error));
        assert.ok(error.message.includes(file), error.message);
        return true;
      });
      assert.equal(await Deno.readTextFile(`${outside}/victim`), "precious\n");
      await Deno.remove(file);
    });
    await t.step("once the link is gone the key works", async () => {
      await store.append(KEY, ENTRY);
      assert.deepEqual(await store.load(KEY), ENTRY);
    });
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("DirectorySessionStore refuses a linked project folder", async () => {
  const { parent, root, outside, store } = await setUp();
  try {
    const dir = `${root}/proj`;
    await Deno.writeTextFile(`${outside}/sess.jsonl`, '{"type":"user","uuid":"x"}\n');
    await Deno.mkdir(`${outside}/sess`);
    await Deno.writeTextFile(`${outside}/sess/keep.jsonl`, '{"type":"user","uuid":"y"}\n');
    await ln("-s", outside, dir);
    await assert.rejects(store.append(KEY, ENTRY), refused(dir));
    await assert.rejects(store.append(SUB, ENTRY), refused(dir));
    await assert.rejects(store.load(KEY), refused(dir));
    await assert.rejects(store.listSessions("proj"), refused(dir));
    await assert.rejects(store.listSubkeys(KEY), refused(dir));
    await assert.rejects(store.delete(KEY), refused(dir));
    assert.deepEqual(await names(outside), ["sess", "sess.jsonl"]);
    assert.deepEqual(await names(`${outside}/sess`), ["keep.jsonl"]);
    assert.equal(await Deno.readTextFile(`${outside}/sess.jsonl`), '{"type":"user","uuid":"x"}\n');
    // The other project is untouched.
    assert.deepEqual(await store.load({ projectKey: "other", sessionId: "s" }), ENTRY);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("DirectorySessionStore refuses a linked subkey folder", async () => {
  const { parent, root, outside, store } = await setUp();
  try {
    await store.append(KEY, ENTRY);
    const dir = `${root}/proj/sess`;
    await Deno.writeTextFile(`${outside}/keep.jsonl`, '{"type":"user","uuid":"y"}\n');
    await ln("-s", outside, dir);
    await assert.rejects(store.append(SUB, ENTRY), refused(dir));
    await assert.rejects(store.load(SUB), refused(dir));
    await assert.rejects(store.listSubkeys(KEY), refused(dir));
    await assert.rejects(store.delete(KEY), refused(dir));
    assert.deepEqual(await names(outside), ["keep.jsonl"]);
    assert.deepEqual(await store.load(KEY), ENTRY, "the main transcript stays");
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("DirectorySessionStore refuses a linked .clock and a linked .name sidecar", async (t) => {
  const { parent, root, outside, store } = await setUp();
  try {
    await Deno.mkdir(`${root}/proj`);
    await Deno.writeTextFile(`${outside}/victim`, "");
    const before = (await Deno.stat(`${outside}/victim`)).mtime!.getTime();
    await t.step(".clock", async () => {
      const clock = `${root}/proj/.clock`;
      await ln("-s", `${outside}/victim`, clock);
      await assert.rejects(store.append(KEY, ENTRY), refused(clock));
      assert.equal(await Deno.readTextFile(`${outside}/victim`), "");
      assert.equal((await Deno.stat(`${outside}/victim`)).mtime!.getTime(), before);
      await Deno.remove(clock);
    });
    await t.step(".name of a hashed (long) session id", async () => {
      const long = { projectKey: "proj", sessionId: "s".repeat(200) };
      await store.append(long, ENTRY);
      const [sidecar] = (await names(`${root}/proj`)).filter((name) => name.endsWith(".name"));
      assert.ok(sidecar);
      await store.delete(long);
      const path = `${root}/proj/${sidecar}`;
      await ln("-s", `${outside}/victim`, path);
      await assert.rejects(store.append(long, ENTRY), refused(path));
      assert.equal(await Deno.readTextFile(`${outside}/victim`), "");
    });
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("DirectorySessionStore refuses a root writable by group or others", async (t) => {
  const parent = await makeTestDir();
  try {
    await t.step("0777: refused at first use, nothing written", async () => {
      const root = `${parent}/shared`;
      await Deno.mkdir(root);
      await Deno.chmod(root, 0o777);
      const store = new DirectorySessionStore(root);
      for (const use of [() => store.append(KEY, ENTRY), () => store.load(KEY)]) {
        await assert.rejects(use(), (error: unknown) => {
          assert.ok(isDuplexError(error, "store_failed"), String(error));
          assert.ok(error.message.includes(root), error.message);
          assert.match(error.message, /chmod go-w/);
          return true;
        });
      }
      assert.deepEqual(await names(root), []);
      const allowed = new DirectorySessionStore(root, { allowSharedRoot: true });
      await allowed.append(KEY, ENTRY);
      assert.deepEqual(await allowed.load(KEY), ENTRY);
    });
    await t.step("a root the store makes is 0700; a linked root is used", async () => {
      const root = `${parent}/made/deeper`;
      const store = new DirectorySessionStore(root);
      await store.append(KEY, ENTRY);
      assert.equal((await Deno.stat(root)).mode! & 0o777, 0o700);
      assert.equal((await Deno.stat(`${root}/proj`)).mode! & 0o777, 0o700);
      await ln("-s", root, `${parent}/alias`);
      assert.deepEqual(await new DirectorySessionStore(`${parent}/alias`).load(KEY), ENTRY);
    });
    await t.step("bad allowSharedRoot", () => {
      assert.throws(
        () => new DirectorySessionStore(parent, { allowSharedRoot: "yes" as never }),
        TypeError,
      );
    });
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
