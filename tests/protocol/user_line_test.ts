import assert from "node:assert/strict";
import { userLineUuid } from "../../src/protocol/_user_line.ts";

Deno.test(
  "userLineUuid() reads a user line's uuid, and nothing else's",
  { permissions: "none" },
  () => {
    const user = {
      type: "user",
      "session_id": "",
      message: { role: "user", content: "hi" },
      uuid: "u1",
    };
    assert.equal(userLineUuid(JSON.stringify(user)), "u1");
    assert.equal(
      userLineUuid(JSON.stringify({ uuid: "u1", type: "user", message: user.message })),
      "u1",
      "key order free",
    );
    assert.equal(userLineUuid(JSON.stringify({ ...user, uuid: undefined })), undefined);
    assert.equal(userLineUuid(JSON.stringify({ ...user, uuid: 7 })), undefined);
    assert.equal(userLineUuid(JSON.stringify({ type: "control_request", uuid: "c1" })), undefined);
    assert.equal(userLineUuid('{"type":"user","uuid":"u1"'), undefined, "bad JSON");
    assert.equal(userLineUuid('"uuid"'), undefined, "not an object");
  },
);
