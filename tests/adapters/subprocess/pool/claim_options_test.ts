/**
 * A claim with a model, a thinking budget and settings: `sendClaim`'s
 * requests, in the SDK 0.3.333's order and split, and how their refusals
 * read; and the pool passing a conversation's model and settings to the
 * parked spare it lands on (a cold start when the settings govern hooks).
 */

import assert from "node:assert/strict";
import { SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import { DuplexError, isDuplexError } from "../../../../src/errors.ts";
import { CLAIM_HOOK_SETTINGS, sendClaim } from "../../../../src/session/claim.ts";
import { EventLog, fakePool, fakeProcess, FakeState, initOf } from "./_helpers.ts";

const CWD = "/srv/alice";
const CLAIMED = { status: "ok", cwd: CWD, "session_id": "s-1" };

/** A request function that records each request and answers from `answer`. */
function recorder(answer: (subtype: string) => unknown = () => ({})) {
  const sent: [string, Record<string, unknown>][] = [];
  const request = (subtype: string, fields: Record<string, unknown>): Promise<unknown> => {
    sent.push([subtype, fields]);
    const reply = subtype === "claim_session" ? CLAIMED : answer(subtype);
    return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply);
  };
  return { sent, request };
}

function refusal(subtype: string, code: string): DuplexError {
  return new DuplexError("control_failed", `The CLI answered "${code}: no" to ${subtype}`, {
    subtype,
    errorCode: code,
  });
}

Deno.test("sendClaim() sends the settings ahead of the claim, the model and the rest after it", async () => {
  const { sent, request } = recorder();
  const reply = await sendClaim({
    cwd: CWD,
    model: "haiku",
    maxThinkingTokens: 1024,
    settings: {
      cleanupPeriodDays: 3,
      enabledPlugins: { a: true },
      model: "sonnet",
      permissions: { deny: ["WebFetch"] },
      fastMode: undefined,
    },
  }, request);
  assert.deepEqual(reply, CLAIMED);
  assert.deepEqual(sent, [
    ["apply_flag_settings", { settings: { cleanupPeriodDays: 3, enabledPlugins: { a: true } } }],
    ["claim_session", { cwd: CWD, include_initialize: true }],
    ["set_model", { model: "haiku" }],
    ["set_max_thinking_tokens", { max_thinking_tokens: 1024 }],
    ["apply_flag_settings", { settings: { model: "sonnet", permissions: { deny: ["WebFetch"] } } }],
  ]);
});

Deno.test("sendClaim() without extras sends the claim alone; null clears the budget", async () => {
  const bare = recorder();
  await sendClaim({ cwd: CWD }, bare.request);
  assert.deepEqual(bare.sent.map(([subtype]) => subtype), ["claim_session"]);
  const cleared = recorder();
  await sendClaim({ cwd: CWD, maxThinkingTokens: null, settings: { agent: "x" } }, cleared.request);
  assert.deepEqual(cleared.sent, [
    ["claim_session", { cwd: CWD, include_initialize: true }],
    ["set_max_thinking_tokens", { max_thinking_tokens: null }],
    ["apply_flag_settings", { settings: { agent: "x" } }],
  ]);
});

Deno.test("sendClaim() refuses hook settings and malformed extras before sending anything", async () => {
  for (const key of CLAIM_HOOK_SETTINGS) {
    const { sent, request } = recorder();
    await assert.rejects(
      sendClaim({ cwd: CWD, settings: { [key]: {}, cleanupPeriodDays: 1 } }, request),
      (error: unknown) =>
        isDuplexError(error, "invalid_argument") && error.message.includes(`(${key})`) &&
        /Nothing was sent/.test(error.message),
    );
    assert.deepEqual(sent, []);
  }
  const bad: Record<string, unknown>[] = [
    { model: "" },
    { model: 3 },
    { maxThinkingTokens: -1 },
    { maxThinkingTokens: 1.5 },
    { settings: [] },
    { settings: "x" },
  ];
  for (const extra of bad) {
    const { sent, request } = recorder();
    await assert.rejects(sendClaim({ cwd: CWD, ...extra }, request), TypeError);
    assert.deepEqual(sent, [], JSON.stringify(extra));
  }
});

Deno.test("sendClaim() reports a refused claim, refused settings and a refused model apart", async (t) => {
  await t.step("the claim refused: claim_refused with the CLI's reason", async () => {
    const request = (subtype: string) =>
      subtype === "claim_session"
        ? Promise.reject(refusal(subtype, "cwd_not_found"))
        : Promise.resolve({});
    await assert.rejects(
      sendClaim({ cwd: CWD, model: "haiku" }, request),
      (error: unknown) =>
        isDuplexError(error, "claim_refused") && error.errorCode === "cwd_not_found",
    );
  });
  await t.step("the settings refused: settings_not_applied", async () => {
    const { request } = recorder((subtype) =>
      subtype === "apply_flag_settings" ? refusal(subtype, "invalid_settings") : {}
    );
    await assert.rejects(
      sendClaim({ cwd: CWD, settings: { cleanupPeriodDays: 1 } }, request),
      (error: unknown) =>
        isDuplexError(error, "claim_refused") && error.errorCode === "settings_not_applied" &&
        /close the session/.test(error.message),
    );
  });
  await t.step("the model refused: option_not_applied, naming it", async () => {
    const { request } = recorder((subtype) =>
      subtype === "set_model" ? refusal(subtype, "invalid_model") : {}
    );
    await assert.rejects(
      sendClaim({ cwd: CWD, model: "nope", maxThinkingTokens: 5 }, request),
      (error: unknown) =>
        isDuplexError(error, "claim_refused") && error.errorCode === "option_not_applied" &&
        /model: /.test(error.message) && !/maxThinkingTokens/.test(error.message),
    );
  });
});

Deno.test("SessionPool passes a conversation's model and settings to a parked spare's claim", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(
    fakePool(state, log, {
      parkedSpares: 1,
      process: fakeProcess(state, {}, { tempDir: state.dir }),
    }),
  );
  await t.step("a model and settings: claimed, the model set", async () => {
    await log.waitFor("spare_ready");
    const a = await pool.acquire("a", {
      cwd: state.other,
      model: "claimed-model",
      maxThinkingTokens: 64,
      settings: { cleanupPeriodDays: 2 },
    });
    assert.equal(log.of("started").at(-1)?.via, "parked");
    assert.equal(initOf(await a.send("hi")).model, "claimed-model");
    pool.release("a");
  });
  await t.step("a model the CLI refuses: option_not_applied, then a cold start", async () => {
    await log.waitFor("spare_ready", 2);
    await pool.acquire("b", { cwd: state.other, model: "unknown-model" }).catch(() => {});
    const refused = log.of("claim_refused").at(-1);
    assert.equal(refused?.reason, "option_not_applied");
    assert.equal(log.of("started").at(-1)?.via, "cold");
    pool.release("b");
  });
  await t.step("settings that govern hooks: a cold start, never a claim", async () => {
    await log.waitFor("spare_ready", 3);
    const before = (await state.starts()).length;
    await pool.acquire("c", { cwd: state.other, settings: { disableAllHooks: true } });
    assert.equal(log.of("started").at(-1)?.via, "cold");
    const starts = await state.starts();
    const cold = starts.at(-1)!;
    assert.ok(starts.length > before);
    const flag = cold.args.find((arg) => arg.startsWith("--settings="));
    assert.ok(flag, `--settings in ${cold.args}`);
    const written = JSON.parse(await Deno.readTextFile(flag.slice("--settings=".length)));
    assert.equal(written.disableAllHooks, true, "the conversation's settings, as a flag");
    pool.release("c");
  });
  await t.step("acquire checks the extras", async () => {
    await assert.rejects(pool.acquire("d", { maxThinkingTokens: -3 }), TypeError);
    await assert.rejects(pool.acquire("d", { settings: [] as never }), TypeError);
  });
});
