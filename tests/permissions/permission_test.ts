import assert from "node:assert/strict";
import { allow, defer, deny } from "../../mod.ts";
import {
  checkDecision,
  decisionPayload,
  permissionRequestFrom,
} from "../../src/permissions/permission.ts";

Deno.test("checkDecision() accepts the three decisions", { permissions: "none" }, () => {
  assert.deepEqual(checkDecision(allow()), { ok: true, decision: { behavior: "allow" } });
  assert.deepEqual(checkDecision(deny("no", { interrupt: true })), {
    ok: true,
    decision: { behavior: "deny", message: "no", interrupt: true },
  });
  assert.deepEqual(checkDecision(defer()), { ok: true, decision: { behavior: "defer" } });
  assert.deepEqual(checkDecision({ behavior: "deny" }), {
    ok: true,
    decision: { behavior: "deny", message: "Denied by the host" },
  });
});

Deno.test(
  "checkDecision() rejects bad shapes with a reason",
  { permissions: "none" },
  async (t) => {
    const bad: [string, unknown, RegExp][] = [
      ["undefined", undefined, /expected a decision object, got undefined/],
      ["null", null, /got null/],
      ["a string", "allow", /got "allow"/],
      ["an array", [], /got an array/],
      ["unknown behavior", { behavior: "maybe" }, /behavior must be/],
      ["no behavior", {}, /behavior must be/],
      ["non-object updatedInput", { behavior: "allow", updatedInput: "x" }, /updatedInput/],
      [
        "bad updatedPermissions",
        { behavior: "allow", updatedPermissions: [1] },
        /updatedPermissions/,
      ],
      ["non-string message", { behavior: "deny", message: 5 }, /message must be a string/],
      ["non-boolean interrupt", { behavior: "deny", message: "m", interrupt: "yes" }, /interrupt/],
    ];
    for (const [name, value, reason] of bad) {
      await t.step(name, () => {
        const check = checkDecision(value);
        assert.equal(check.ok, false);
        assert.match(check.ok ? "" : check.reason, reason);
      });
    }
  },
);

Deno.test("decisionPayload() always sends updatedInput on allow", { permissions: "none" }, () => {
  const request = { input: { command: "ls" }, toolUseId: "toolu_1" };
  assert.deepEqual(decisionPayload(allow(), request), {
    behavior: "allow",
    updatedInput: { command: "ls" },
    toolUseID: "toolu_1",
  });
  assert.deepEqual(
    decisionPayload({
      behavior: "allow",
      updatedInput: { command: "echo safe" },
      updatedPermissions: [{
        type: "addRules",
        rules: [{ toolName: "Bash" }],
        behavior: "allow",
        destination: "session",
      }],
    }, request),
    {
      behavior: "allow",
      updatedInput: { command: "echo safe" },
      updatedPermissions: [{
        type: "addRules",
        rules: [{ toolName: "Bash" }],
        behavior: "allow",
        destination: "session",
      }],
      toolUseID: "toolu_1",
    },
  );
  assert.deepEqual(
    decisionPayload(deny("no", { interrupt: true }), { input: {}, toolUseId: undefined }),
    {
      behavior: "deny",
      message: "no",
      interrupt: true,
    },
  );
});

Deno.test("permissionRequestFrom() reads the CLI's fields and tolerates junk", {
  permissions: "none",
}, () => {
  const signal = new AbortController().signal;
  const request = permissionRequestFrom("r1", {
    subtype: "can_use_tool",
    tool_name: "Bash",
    display_name: "Bash",
    input: { command: "touch x" },
    tool_use_id: "toolu_1",
    permission_suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
    blocked_path: "/p/x",
  }, signal);
  assert.equal(request.toolName, "Bash");
  assert.deepEqual(request.input, { command: "touch x" });
  assert.equal(request.suggestions.length, 1);
  assert.equal(request.blockedPath, "/p/x");
  assert.equal(request.signal, signal);
  const junk = permissionRequestFrom("r2", {
    subtype: "can_use_tool",
    tool_name: 7 as unknown as string,
    input: null as unknown as Record<string, unknown>,
    permission_suggestions: "x" as unknown as [],
  }, signal);
  assert.equal(junk.toolName, "");
  assert.deepEqual(junk.input, {});
  assert.deepEqual(junk.suggestions, []);
});
