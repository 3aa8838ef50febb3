import assert from "node:assert/strict";
import { countListeners } from "./_helpers.ts";
import { DuplexError } from "../../mod.ts";
import { ControlChannel } from "../../src/session/_control_channel.ts";

function channel(timeoutMs = 1000) {
  const written: Record<string, unknown>[] = [];
  const ch = new ControlChannel((frame) => {
    written.push(frame);
    return Promise.resolve();
  }, timeoutMs);
  const lastId = () => {
    const frame = written.findLast((f) => f.type === "control_request");
    return String(frame?.request_id);
  };
  return { ch, written, lastId };
}

Deno.test("ControlChannel resolves on success and rejects on error responses", {
  permissions: "none",
}, async () => {
  const { ch, written, lastId } = channel();
  const ok = ch.request("set_model", { model: "sonnet" });
  assert.deepEqual(written[0], {
    type: "control_request",
    request_id: lastId(),
    request: { subtype: "set_model", model: "sonnet" },
  });
  assert.equal(
    ch.settle({
      type: "control_response",
      response: { subtype: "success", request_id: lastId(), response: { model: "x" } },
    }),
    true,
  );
  assert.deepEqual(await ok, { model: "x" });
  const bad = ch.request("nope", {});
  ch.settle({
    type: "control_response",
    response: {
      subtype: "error",
      request_id: lastId(),
      error: "Unsupported control request subtype: nope",
      error_code: "unsupported_request",
    },
  });
  await assert.rejects(bad, (e) =>
    e instanceof DuplexError && e.kind === "control_failed" &&
    e.errorCode === "unsupported_request" && e.subtype === "nope");
  assert.equal(ch.pendingCount, 0);
});

Deno.test("ControlChannel settles each request exactly once", { permissions: "none" }, async () => {
  const { ch, lastId } = channel();
  const p = ch.request("interrupt", {});
  const response = {
    type: "control_response" as const,
    response: { subtype: "success" as const, request_id: lastId() },
  };
  assert.equal(ch.settle(response), true);
  assert.equal(ch.settle(response), false, "a second response is stray");
  assert.deepEqual(await p, {});
  assert.equal(
    ch.settle({ type: "control_response", response: { subtype: "success", request_id: "zzz" } }),
    false,
  );
});

Deno.test("ControlChannel times out, withdraws the request, and cleans up", {
  permissions: "none",
}, async () => {
  const { ch, written, lastId } = channel(20);
  const p = ch.request("get_settings", {});
  const id = lastId();
  await assert.rejects(p, (e) => e instanceof DuplexError && e.kind === "timeout");
  assert.deepEqual(written.at(-1), { type: "control_cancel_request", request_id: id });
  assert.equal(ch.pendingCount, 0);
});

Deno.test("ControlChannel rejects with the signal's reason and leaves no listeners", {
  permissions: "none",
}, async () => {
  const controller = new AbortController();
  const signal = controller.signal;
  const listeners = countListeners(signal);
  const { ch: ch2, lastId } = channel();
  for (let i = 0; i < 100; i++) {
    const p = ch2.request("mcp_status", {}, { signal });
    ch2.settle({
      type: "control_response",
      response: { subtype: "success", request_id: lastId() },
    });
    await p;
  }
  assert.equal(listeners(), 0);
  const reason = new Error("stop");
  const p = ch2.request("mcp_status", {}, { signal });
  controller.abort(reason);
  await assert.rejects(p, (e) => e === reason);
  await assert.rejects(ch2.request("x", {}, { signal }), (e) => e === reason);
});

Deno.test("ControlChannel.failAll() rejects pending and later requests", {
  permissions: "none",
}, async () => {
  const { ch } = channel();
  const a = ch.request("a", {});
  const b = ch.request("b", {});
  const error = new DuplexError("process_exited", "gone");
  ch.failAll(error);
  await assert.rejects(a, (e) => e === error);
  await assert.rejects(b, (e) => e === error);
  await assert.rejects(ch.request("c", {}), (e) => e === error);
});

Deno.test("ControlChannel rejects when the write fails", { permissions: "none" }, async () => {
  const boom = new DuplexError("process_exited", "EPIPE");
  const ch = new ControlChannel(() => Promise.reject(boom), 1000);
  await assert.rejects(ch.request("interrupt", {}), (e) => e === boom);
  assert.equal(ch.pendingCount, 0);
});
