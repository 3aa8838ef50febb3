/**
 * The remote transport checks what it is given: its options (durations as
 * the deadline helper takes them), every relay message (no unchecked
 * shapes), abort reasons (passed through unchanged); and it acknowledges
 * what the relay waits for.
 */

import assert from "node:assert/strict";
import { remote, type RemoteOptions } from "../../../adapters/remote/mod.ts";
import { isDuplexError } from "../../../src/errors.ts";
import {
  connect,
  handshake,
  openRemote,
  rejection,
  TOKEN,
  within,
  withRelay,
} from "./_fake_relay.ts";

const PERMISSIONS: Deno.PermissionOptions = { net: ["127.0.0.1"] };

Deno.test("remote() takes durations from 1 ms to 2^31-1 ms, or Infinity", async (t) => {
  const base = { url: "ws://127.0.0.1:9/v1", token: TOKEN };
  await t.step("beyond what a timer honours, or below the minimum: RangeError", () => {
    for (
      const options of [
        { heartbeatMs: 2 ** 31 },
        { connectTimeoutMs: 2 ** 31 },
        { closeTimeoutMs: 2 ** 31 },
        { connectTimeoutMs: 0 },
        { heartbeatMs: 0 },
        { heartbeatMs: Number.NaN },
        { closeTimeoutMs: -1 },
        { reconnect: { initialDelayMs: 2 ** 31 } },
        { reconnect: { maxDelayMs: -1 } },
        { reconnect: { attempts: 1.5 } },
      ] satisfies Partial<RemoteOptions>[]
    ) {
      assert.throws(() => remote({ ...base, ...options }), RangeError, JSON.stringify(options));
    }
  });
  await t.step("Infinity (no timer), and 0 where waiting is optional", () => {
    remote({
      ...base,
      heartbeatMs: Infinity,
      connectTimeoutMs: Infinity,
      closeTimeoutMs: Infinity,
      reconnect: { attempts: 2, initialDelayMs: 0, maxDelayMs: Infinity },
    });
    remote({ ...base, closeTimeoutMs: 0, reconnect: { initialDelayMs: 0, maxDelayMs: 0 } });
  });
});

Deno.test(
  "remote() with heartbeatMs: Infinity sends no pings",
  { permissions: PERMISSIONS },
  () =>
    withRelay(async (relay) => {
      const { transport, connection } = await connect(relay, {
        heartbeatMs: Infinity,
        closeTimeoutMs: 100,
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(connection.received.filter((m) => m.t === "ping"), []);
      await transport.close();
    }),
);

Deno.test("remote() passes an abort reason through unchanged, whatever it is", {
  permissions: PERMISSIONS,
}, async (t) => {
  await t.step("aborted while connecting", () =>
    withRelay(async (relay) => {
      const controller = new AbortController();
      const opening = openRemote(relay, {}, controller.signal);
      await within(relay.accept(), "the connection");
      controller.abort("stop, please");
      assert.equal(await rejection(opening, "the abort"), "stop, please");
    }));
  await t.step("aborted before the call", () =>
    withRelay(async (relay) => {
      const reason = { why: "not an Error" };
      const outcome = await rejection(openRemote(relay, {}, AbortSignal.abort(reason)));
      assert.equal(outcome, reason);
    }));
});

Deno.test("remote() checks every field of the relay's messages", {
  permissions: PERMISSIONS,
}, async (t) => {
  await t.step(
    "an exit without a stderr tail still ends the transport",
    () =>
      withRelay(async (relay) => {
        const { transport, connection } = await connect(relay, { reconnect: false });
        const pending = transport.write("{}");
        connection.sendRaw(JSON.stringify({ t: "exit", seq: 1, exit: { code: 3, signal: null } }));
        const exit = await within(transport.closed, "the exit");
        assert.equal(exit.code, 3);
        assert.equal(exit.stderrTail, "");
        await assert.rejects(
          within(pending, "the write"),
          (e: unknown) => isDuplexError(e, "process_exited"),
        );
      }),
  );
  await t.step(
    "a malformed exit ends the transport with a protocol error",
    () =>
      withRelay(async (relay) => {
        const { transport, connection } = await connect(relay, { reconnect: false });
        connection.sendRaw(
          JSON.stringify({ t: "exit", seq: 1, exit: { code: "0", signal: null } }),
        );
        const exit = await within(transport.closed, "the exit");
        assert.match(exit.reason ?? "", /broke the protocol: An exit message needs exit\.code/);
      }),
  );
  for (
    const [name, answer, reason] of [
      [
        "a ready that lacks a field fails the connection, naming it",
        { t: "ready", session: "s-1", resumed: false, graceMs: 1 },
        /A ready message needs inSeq/,
      ],
      [
        "an error of an unknown kind is a protocol error, not a refusal",
        { t: "error", kind: "teapot", message: "no" },
        /An error message needs kind: one of unauthorized/,
      ],
    ] as const
  ) {
    await t.step(name, () =>
      withRelay(async (relay) => {
        const opening = openRemote(relay);
        const connection = await within(relay.accept(), "the connection");
        await connection.next("hello");
        connection.sendRaw(JSON.stringify(answer));
        const error = await rejection(opening);
        assert.ok(isDuplexError(error, "protocol"), String(error));
        assert.match(error.message, reason);
      }));
  }
});

Deno.test(
  "remote() acknowledges what the relay waits for",
  { permissions: PERMISSIONS },
  async (t) => {
    await t.step(
      "the exit (the relay then forgets the session at once)",
      () =>
        withRelay(async (relay) => {
          const { transport, connection } = await connect(relay);
          connection.send({
            t: "exit",
            seq: 1,
            exit: { code: 0, signal: null, stderrTail: "", requested: false },
          });
          await within(transport.closed, "the exit");
          assert.deepEqual(await within(connection.next("ack"), "the ack of the exit"), {
            t: "ack",
            seq: 1,
          });
        }),
    );
    await t.step(
      "after a resume, the output it had acknowledged on the lost connection",
      () =>
        withRelay(async (relay) => {
          const { transport, connection } = await connect(relay);
          const reader = transport.readable.getReader();
          connection.output(1, "one\n");
          await within(reader.read(), "the output");
          const written = transport.write("in-1"); // the acknowledgement rides with it
          assert.deepEqual(await within(connection.next("ack"), "the ack"), { t: "ack", seq: 1 });
          connection.close(4999); // the relay may not have read that frame
          const resumed = await within(relay.accept(), "the resume");
          await handshake(resumed, "s-1", 1);
          await written;
          assert.deepEqual(await within(resumed.next("ack"), "the ack again"), {
            t: "ack",
            seq: 1,
          });
          reader.releaseLock();
          await transport.close();
        }),
    );
  },
);
