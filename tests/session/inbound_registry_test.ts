import assert from "node:assert/strict";
import { isDuplexError } from "../../mod.ts";
import { controlResponse, InboundRegistry } from "../../src/session/_inbound_registry.ts";

function registry() {
  const written: Record<string, unknown>[] = [];
  const reg = new InboundRegistry((frame) => {
    try {
      JSON.stringify(frame); // a TypeError for a BigInt, as the session's write rejects with
    } catch (error) {
      return Promise.reject(error);
    }
    written.push(frame);
    return Promise.resolve();
  });
  return { reg, written };
}

Deno.test("controlResponse() builds success and error frames, with an optional code", {
  permissions: "none",
}, () => {
  assert.deepEqual(controlResponse("r1", { ok: true, payload: { a: 1 } }), {
    type: "control_response",
    response: { subtype: "success", request_id: "r1", response: { a: 1 } },
  });
  assert.deepEqual(controlResponse("r2", { ok: false, error: "no", code: "unsupported_request" }), {
    type: "control_response",
    response: {
      subtype: "error",
      request_id: "r2",
      error: "no",
      error_code: "unsupported_request",
    },
  });
  assert.deepEqual(controlResponse("r3", { ok: false, error: "no" }).response, {
    subtype: "error",
    request_id: "r3",
    error: "no",
  });
});

Deno.test(
  "InboundRegistry serves each request id once: the first request and the first answer win",
  {
    permissions: "none",
  },
  async () => {
    const { reg, written } = registry();
    const first = reg.open("r1", { subtype: "x", data: () => "first" });
    assert.equal(first?.data, "first");
    assert.equal(reg.open("r1", { subtype: "x", data: () => "second" }), undefined);
    assert.equal(reg.get("r1", "y"), undefined, "get() matches the subtype too");
    assert.equal(
      reg.answer("r1", { ok: true, payload: { n: 1 } }, new Error("someone else")),
      true,
    );
    assert.equal(first?.signal.aborted, true, "the answer aborted a handler still running");
    assert.equal(reg.answer("r1", { ok: true, payload: { n: 2 } }), false);
    await Promise.resolve();
    assert.deepEqual(written.map((f) => (f.response as { response: unknown }).response), [{
      n: 1,
    }]);
    assert.equal(reg.size, 0);
  },
);

Deno.test("InboundRegistry.cancel() aborts the request's signal and never answers", {
  permissions: "none",
}, async () => {
  const { reg, written } = registry();
  const drops: string[] = [];
  const entry = reg.open("r1", {
    subtype: "x",
    data: () => 0,
    onDrop: (_, source) => drops.push(source),
  });
  assert.equal(reg.cancel("r1"), true);
  assert.equal(reg.cancel("r1"), false);
  assert.ok(isDuplexError(entry?.signal.reason, "aborted"));
  assert.equal(reg.answer("r1", { ok: true, payload: {} }), false);
  await Promise.resolve();
  assert.deepEqual(written, []);
  assert.deepEqual(drops, ["cli"]);
});

Deno.test("InboundRegistry times a request out once and clears the timer on an answer", {
  permissions: "none",
}, async () => {
  const { reg } = registry();
  const timedOut = Promise.withResolvers<string>();
  reg.open("slow", {
    subtype: "x",
    data: () => 0,
    timeoutMs: 10,
    onTimeout: (entry) => timedOut.resolve(entry.requestId),
  });
  assert.equal(await timedOut.promise, "slow");
  reg.answer("slow", { ok: true, payload: {} });
  // Answered before its time: the sanitizer fails the test if the timer were left running.
  reg.open("fast", { subtype: "x", data: () => 0, timeoutMs: 60_000, onTimeout: () => {} });
  assert.equal(reg.answer("fast", { ok: true, payload: {} }), true);
});

Deno.test("InboundRegistry.abortAll() drops every request as the session ends", {
  permissions: "none",
}, () => {
  const { reg } = registry();
  const drops: string[] = [];
  const onDrop = (entry: { requestId: string }, source: string) =>
    drops.push(`${entry.requestId}:${source}`);
  const a = reg.open("a", { subtype: "x", data: () => 0, onDrop });
  reg.open("b", { subtype: "y", data: () => 0, onDrop });
  reg.abortAll("The session ended");
  assert.deepEqual(drops, ["a:session", "b:session"]);
  assert.equal((a?.signal.reason as Error).message, "The session ended");
  assert.equal(reg.size, 0);
});

Deno.test("InboundRegistry.serve() answers with the handler's payload, error, or encoding error", {
  permissions: "none",
}, async () => {
  const { reg, written } = registry();
  reg.serve("ok", "x", () => ({ fine: true }));
  reg.serve("throws", "x", () => {
    throw new Error("nope");
  });
  reg.serve("bigint", "x", () => ({ n: 1n }));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  const byId = Object.fromEntries(
    written.map((f) => {
      const r = f.response as Record<string, unknown>;
      return [r.request_id, r.subtype === "success" ? r.response : r.error];
    }),
  );
  assert.deepEqual(byId.ok, { fine: true });
  assert.equal(byId.throws, "nope");
  assert.match(String(byId.bigint), /BigInt/);
});
