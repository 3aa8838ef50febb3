/** Claiming a parked spare: the wire fields, the reply, and a refusal's reason. */

import assert from "node:assert/strict";
import { DuplexSession, isDuplexError } from "../../mod.ts";
import { controlError, controlSuccess, ScriptedCli } from "../../src/testing/mod.ts";

const CWD = "/srv/projects/alice";
const SESSION = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";

function spare(answer: (requestId: string, request: Record<string, unknown>) => unknown) {
  const cli = new ScriptedCli({ echo: true });
  const seen: Record<string, unknown>[] = [];
  cli.on("control_request:claim_session", (frame) => {
    const { request_id: id, request } = frame as {
      request_id: string;
      request: Record<string, unknown>;
    };
    seen.push(request);
    return [answer(id, request)];
  });
  return { cli, seen };
}

Deno.test("claimSession sends the claim's wire fields and reads the reply", async () => {
  const { cli, seen } = spare((id) =>
    controlSuccess(id, {
      status: "ok",
      cwd: CWD,
      session_id: SESSION,
      parked_ms: 1234,
      initialize: { commands: [], models: [], output_style: "default" },
    })
  );
  await using session = await DuplexSession.start({ transport: cli.transport });
  const result = await session.claimSession({
    cwd: CWD,
    permissionMode: "plan",
    additionalDirectories: ["/srv/shared"],
    appendSystemPrompt: "Be brief.",
    title: "Alice",
    env: { CLAUDE_CODE_HOST_SESSION_ID: "h1" },
  });
  assert.deepEqual(seen[0], {
    subtype: "claim_session",
    cwd: CWD,
    include_initialize: true,
    permission_mode: "plan",
    additional_directories: ["/srv/shared"],
    append_system_prompt: "Be brief.",
    title: "Alice",
    env: { CLAUDE_CODE_HOST_SESSION_ID: "h1" },
  });
  assert.equal(result.sessionId, SESSION);
  assert.equal(result.parkedMs, 1234);
  assert.equal(session.sessionId, SESSION, "the session takes the claimed id at once");
  assert.ok(result.info, "the claimed folder's initialize payload");
  assert.equal(session.info, result.info);
});

Deno.test("a refused claim is claim_refused with the CLI's reason token", async (t) => {
  for (
    const [name, reply, reason] of [
      [
        "from error_code",
        (id: string) =>
          controlError(id, "cwd_not_found: the claim cwd does not exist", "cwd_not_found"),
        "cwd_not_found",
      ],
      [
        "from the message alone",
        (id: string) => controlError(id, "env_key_not_claimable:FOO: not on the allow-list"),
        "env_key_not_claimable",
      ],
      ["a message without a token", (id: string) => controlError(id, "Something broke"), "refused"],
    ] as const
  ) {
    await t.step(name, async () => {
      const { cli } = spare(reply);
      await using session = await DuplexSession.start({ transport: cli.transport });
      const error = await session.claimSession({ cwd: CWD }).catch((e) => e);
      assert.ok(isDuplexError(error, "claim_refused"), String(error));
      assert.equal(error.errorCode, reason);
      assert.equal(error.subtype, "claim_session");
      assert.ok(isDuplexError(error.cause, "control_failed"));
    });
  }
});

Deno.test("a claim reply without a session id is a protocol error; a bad cwd a TypeError", async () => {
  const { cli } = spare((id) => controlSuccess(id, { status: "ok" }));
  await using session = await DuplexSession.start({ transport: cli.transport });
  await assert.rejects(session.claimSession({ cwd: CWD }), (e) => isDuplexError(e, "protocol"));
  await assert.rejects(session.claimSession({ cwd: "" }), TypeError);
});
