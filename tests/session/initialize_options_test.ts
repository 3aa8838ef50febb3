/*
 * The official SDK's options that travel as `initialize` fields, typed here
 * (toolAliases, planModeInstructions, agentProgressSummaries,
 * supportedDialogKinds, perTaskStopAffordance), and `onUserDialog`, which
 * answers the CLI's `request_user_dialog`. The real CLI takes them in
 * tests/e2e/options_initialize_e2e_test.ts.
 */
import assert from "node:assert/strict";
import { DuplexSession, type DuplexSessionOptions } from "../../mod.ts";
import type { UserDialogRequest } from "../../src/protocol/mod.ts";
import { controlCancel } from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { replyTo, scripted, tick } from "./_helpers.ts";

const dialog = (requestId: string, request: Record<string, unknown> = {}) => ({
  type: "control_request",
  request_id: requestId,
  request: {
    subtype: "request_user_dialog",
    dialog_kind: "refusal_fallback_prompt",
    payload: { originalModel: "a", fallbackModel: "b" },
    tool_use_id: "toolu_1",
    ...request,
  },
});

Deno.test("the typed initialize options are written in initialize, under the SDK's names", async () => {
  const cli = new ScriptedCli({ echo: true });
  await using _ = await DuplexSession.start({
    transport: cli.transport,
    toolAliases: { Shell: "Bash" },
    planModeInstructions: "1. Read. 2. Write the plan.",
    agentProgressSummaries: true,
    supportedDialogKinds: ["refusal_fallback_prompt"],
    perTaskStopAffordance: true,
    onUserDialog: () => ({ behavior: "cancelled" }),
    initialize: { perTaskStopAffordance: false },
  });
  const init = await cli.nextWrite((f) => f.type === "control_request");
  const request = init.request as Record<string, unknown>;
  assert.equal(request.subtype, "initialize");
  assert.deepEqual(request.toolAliases, { Shell: "Bash" });
  assert.equal(request.planModeInstructions, "1. Read. 2. Write the plan.");
  assert.equal(request.agentProgressSummaries, true);
  assert.deepEqual(request.supportedDialogKinds, ["refusal_fallback_prompt"]);
  assert.equal(request.perTaskStopAffordance, false, "a raw initialize field wins");
});

Deno.test("bad initialize options are TypeErrors before the transport opens", async (t) => {
  const bad: [Partial<DuplexSessionOptions>, RegExp][] = [
    [{ toolAliases: "Bash" as never }, /toolAliases must be a record/],
    [{ toolAliases: { Shell: "" } }, /toolAliases\["Shell"\] must map a tool name/],
    [{ toolAliases: { Shell: 3 as never } }, /toolAliases\["Shell"\]/],
    [{ planModeInstructions: "" }, /planModeInstructions must be a non-empty string/],
    [{ planModeInstructions: 1 as never }, /planModeInstructions/],
    [{ agentProgressSummaries: "yes" as never }, /agentProgressSummaries must be a boolean/],
    [{ perTaskStopAffordance: 1 as never }, /perTaskStopAffordance must be a boolean/],
    [{ supportedDialogKinds: "x" as never }, /supportedDialogKinds must be an array/],
    [
      { supportedDialogKinds: [""], onUserDialog: () => ({ behavior: "cancelled" }) },
      /supportedDialogKinds must be an array of dialog kinds/,
    ],
    [
      { supportedDialogKinds: ["refusal_fallback_prompt"] },
      /supportedDialogKinds needs onUserDialog/,
    ],
    [{ onUserDialog: {} as never }, /onUserDialog must be a function/],
  ];
  for (const [options, message] of bad) {
    await t.step(JSON.stringify(options) ?? "", async () => {
      const cli = new ScriptedCli({ echo: true });
      await assert.rejects(
        DuplexSession.start({ transport: cli.transport, ...options }),
        (error: Error) => error instanceof TypeError && message.test(error.message),
      );
      assert.equal(cli.opened, 0);
    });
  }
  await t.step("an empty list needs no handler", async () => {
    const cli = new ScriptedCli({ echo: true });
    await using _ = await DuplexSession.start({
      transport: cli.transport,
      supportedDialogKinds: [],
    });
  });
});

Deno.test("onUserDialog answers request_user_dialog with the SDK's result shapes", async (t) => {
  const seen: [UserDialogRequest, string][] = [];
  let answer: unknown = { behavior: "completed", result: "retry" };
  const { cli, session } = await scripted({ echo: false }, {
    onUserDialog: async (request, { requestId }) => {
      seen.push([request, requestId]);
      await tick();
      return answer as never;
    },
    onControlRequest: () => ({ never: "used for dialogs" }),
  });
  await using _ = session;
  await t.step("completed", async () => {
    cli.emit(dialog("u1"));
    assert.deepEqual((await replyTo(cli, "u1")).response, {
      behavior: "completed",
      result: "retry",
    });
    const [request, requestId] = seen[0]!;
    assert.equal(requestId, "u1");
    assert.equal(request.dialogKind, "refusal_fallback_prompt");
    assert.deepEqual(request.payload, { originalModel: "a", fallbackModel: "b" });
    assert.equal(request.toolUseID, "toolu_1");
  });
  await t.step("cancelled", async () => {
    answer = { behavior: "cancelled", extra: 1 };
    cli.emit(dialog("u2", { dialog_kind: "something_new", payload: "not an object" }));
    assert.deepEqual((await replyTo(cli, "u2")).response, { behavior: "cancelled" });
    assert.deepEqual(seen[1]![0].payload, {});
  });
  await t.step("an answer of another shape is an error reply", async () => {
    answer = { behavior: "completed" };
    cli.emit(dialog("u3"));
    const reply = await replyTo(cli, "u3");
    assert.equal(reply.subtype, "error");
    assert.match(String(reply.error), /onUserDialog must return/);
  });
  await t.step("a withdrawn dialog aborts the handler's signal and is not answered", async () => {
    const { cli, session } = await scripted({ echo: false }, {
      onUserDialog: (_request, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => resolve({ behavior: "cancelled" }));
        }),
    });
    await using _ = session;
    cli.emit(dialog("u4"));
    await tick(5);
    cli.emit(controlCancel("u4"));
    await tick(20);
    const answered = cli.received.some((f) =>
      (f.response as { request_id?: string } | undefined)?.request_id === "u4"
    );
    assert.equal(answered, false);
  });
});

Deno.test("without onUserDialog a dialog is answered unsupported at once, as before", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  cli.emit(dialog("u5"));
  const reply = await replyTo(cli, "u5");
  assert.equal(reply.subtype, "error");
  assert.match(String(reply.error), /Unsupported control request subtype: request_user_dialog/);
});
