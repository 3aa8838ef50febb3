import assert from "node:assert/strict";
import {
  checkKey,
  checkProjectKey,
  checkSessionKey,
  serializeEntries,
} from "../../src/store/_store_checks.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";

const ACTION = "append to the store";

function refuses(call: () => unknown, message: string): void {
  assert.throws(call, (error: unknown) => {
    assert.ok(error instanceof TypeError);
    assert.equal(error.message, `Cannot ${ACTION}: ${message}`);
    return true;
  });
}

Deno.test("checkKey() names the wrong field and what it got", { permissions: "none" }, () => {
  refuses(() => checkKey(null, ACTION), "the key must be an object, got null");
  refuses(() => checkKey([], ACTION), "the key must be an object, got an array");
  refuses(
    () => checkKey({ projectKey: "", sessionId: "s" }, ACTION),
    "key.projectKey must be a non-empty string, got an empty string",
  );
  refuses(
    () => checkKey({ projectKey: "p", sessionId: 7 }, ACTION),
    "key.sessionId must be a non-empty string, got number 7",
  );
  refuses(
    () => checkKey({ projectKey: "p", sessionId: "s", subpath: "" }, ACTION),
    "key.subpath must be absent or a non-empty string, got an empty string " +
      "(omit it for the main transcript)",
  );
  const key = { projectKey: "p", sessionId: "s", subpath: "a" };
  assert.equal(checkKey(key, ACTION), key);
});

Deno.test(
  "checkSessionKey() checks a session and reads no subpath",
  { permissions: "none" },
  () => {
    refuses(
      () => checkSessionKey({ sessionId: "s" }, ACTION),
      "key.projectKey must be a non-empty string, got undefined",
    );
    assert.deepEqual(checkSessionKey({ projectKey: "p", sessionId: "s", subpath: "" }, ACTION), {
      projectKey: "p",
      sessionId: "s",
    });
  },
);

Deno.test("checkProjectKey() names the argument it checks", { permissions: "none" }, () => {
  refuses(
    () => checkProjectKey("", ACTION),
    "projectKey must be a non-empty string, got an empty string",
  );
  refuses(
    () => checkProjectKey(undefined, ACTION, "key.projectKey"),
    "key.projectKey must be a non-empty string, got undefined",
  );
  assert.equal(checkProjectKey("p", ACTION), "p");
});

Deno.test(
  "serializeEntries() names the first bad entry by its index",
  { permissions: "none" },
  () => {
    refuses(() => serializeEntries("x", ACTION), 'entries must be an array, got "x"');
    refuses(
      () => serializeEntries([{ type: "a" }, 5], ACTION),
      "entries[1] must be an object, got number 5",
    );
    assert.deepEqual(serializeEntries([{ type: "a", uuid: "u" }], ACTION), [
      { json: '{"type":"a","uuid":"u"}', uuid: "u" },
    ]);
  },
);

Deno.test("InMemorySessionStore.listSubkeys() reads the session of a key, not its subpath", {
  permissions: "none",
}, async () => {
  const store = new InMemorySessionStore();
  await store.append({ projectKey: "p", sessionId: "s", subpath: "agent-1" }, [{ type: "x" }]);
  const withSubpath = { projectKey: "p", sessionId: "s", subpath: "" };
  assert.deepEqual(await store.listSubkeys(withSubpath), ["agent-1"]);
});
