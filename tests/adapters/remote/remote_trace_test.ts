/**
 * `remote()` hands the session's trace context to the relay in its hello,
 * and again in each resume hello; one that is not a W3C trace context is
 * not sent.
 */

import assert from "node:assert/strict";
import { remote } from "../../../adapters/remote/mod.ts";
import type { TransportOpenContext } from "../../../src/transport/transport.ts";
import { type FakeRelay, handshake, TOKEN, within, withRelay } from "./_fake_relay.ts";

const PERMISSIONS: Deno.PermissionOptions = { net: ["127.0.0.1"] };
const TRACE = {
  traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  tracestate: "rojo=00f067aa0ba902b7",
};

const EXIT = { code: 0, signal: null, stderrTail: "", requested: false };

function open(relay: FakeRelay, context: Omit<TransportOpenContext, "signal">) {
  return remote({
    url: relay.url,
    token: TOKEN,
    reconnect: { attempts: 3, initialDelayMs: 10, maxDelayMs: 50 },
    closeTimeoutMs: 1_000,
  })({ signal: new AbortController().signal, ...context });
}

Deno.test("remote() sends the session's trace context in its hello, and with each resume", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const opening = open(relay, { traceContext: TRACE });
    const first = await within(relay.accept(), "the connection");
    assert.deepEqual((await handshake(first)).trace, TRACE);
    const transport = await opening;
    first.close(4999); // dropped: the transport resumes
    const second = await within(relay.accept(), "the reconnection");
    const hello = await handshake(second);
    assert.deepEqual(hello.resume, { session: "s-1", after: 0, applied: 0 });
    assert.deepEqual(hello.trace, TRACE, "the resume carries the same trace");
    second.send({ t: "exit", seq: 1, exit: EXIT });
    assert.equal((await transport.closed).code, 0);
  }));

Deno.test("remote() sends no trace context it was not given, nor a malformed one", {
  permissions: PERMISSIONS,
}, async (t) => {
  for (
    const [what, context] of [
      ["none", {}],
      ["a malformed traceparent", { traceContext: { traceparent: "00-abc-def-01" } }],
      ["an all-zero trace id", {
        traceContext: { traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` },
      }],
    ] as const
  ) {
    await t.step(what, () =>
      withRelay(async (relay) => {
        const opening = open(relay, context);
        const connection = await within(relay.accept(), "the connection");
        const hello = await handshake(connection);
        assert.equal("trace" in hello, false, JSON.stringify(hello));
        connection.send({ t: "exit", seq: 1, exit: EXIT });
        await (await opening).closed;
      }));
  }
  await t.step(
    "a malformed tracestate is left out, the traceparent sent",
    () =>
      withRelay(async (relay) => {
        const opening = open(relay, {
          traceContext: { traceparent: TRACE.traceparent, tracestate: "Bad Key=1" },
        });
        const connection = await within(relay.accept(), "the connection");
        assert.deepEqual((await handshake(connection)).trace, { traceparent: TRACE.traceparent });
        connection.send({ t: "exit", seq: 1, exit: EXIT });
        await (await opening).closed;
      }),
  );
});
