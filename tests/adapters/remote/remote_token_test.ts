/**
 * `remote({ token })` with a token function, against the real relay taking
 * scoped HS256 tokens: asked once per connection attempt, so a reconnection
 * after the first token expired presents a fresh one; a function that
 * fails, returns no string or takes too long fails the connect, typed.
 */

import assert from "node:assert/strict";
import { remote, type WebSocketConstructor } from "../../../adapters/remote/mod.ts";
import { DuplexSession } from "../../../src/session/duplex_session.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { mintRelayToken, RELAY_TOKEN_CLOCK_SKEW_SECONDS } from "../../../src/token/mod.ts";
import { startRelay } from "../relay/_client.ts";

const SECRET = "a-secret-of-at-least-32-bytes-0123456789";
const TTL_SECONDS = 60;

/** A WebSocket whose connections the test can cut. */
function cuttable(): { Socket: WebSocketConstructor; cut(): void } {
  const live: WebSocket[] = [];
  class Cuttable extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      live.push(this);
    }
  }
  return {
    Socket: Cuttable,
    cut() {
      for (const socket of live.splice(0)) socket.close(4999, "cut by the test");
    },
  };
}

/**
 * A token the relay accepts for about `validMs` more (its `exp` already
 * past, within the clock skew), and the time after which it refuses it.
 */
async function expiringToken(validMs: number): Promise<{ token: string; refusedAfter: number }> {
  const exp = Math.floor((Date.now() + validMs) / 1000) - RELAY_TOKEN_CLOCK_SKEW_SECONDS;
  const token = await mintRelayToken({
    secret: SECRET,
    subject: "user-1",
    ttlSeconds: TTL_SECONDS,
    issuedAt: exp - TTL_SECONDS,
  });
  return { token, refusedAfter: (exp + RELAY_TOKEN_CLOCK_SKEW_SECONDS + 1) * 1000 };
}

function fresh(): Promise<string> {
  return mintRelayToken({ secret: SECRET, subject: "user-1", ttlSeconds: TTL_SECONDS });
}

async function waitUntil(time: number): Promise<void> {
  const ms = time - Date.now();
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
}

const RECONNECT = { attempts: 3, initialDelayMs: 10, maxDelayMs: 50 };

Deno.test("remote() with a token function reconnects after the token expired; a fixed token cannot", async (t) => {
  await using setup = await startRelay({ tokens: [], secrets: [SECRET] });
  const first = await expiringToken(3000);
  const fixedFirst = await expiringToken(3000);

  const calls: string[] = [];
  const net = cuttable();
  await using session = await DuplexSession.start({
    transport: remote({
      url: setup.relay.url,
      token: async ({ signal }) => {
        assert.ok(signal instanceof AbortSignal);
        calls.push(calls.length === 0 ? "first" : "fresh");
        return calls.length === 1 ? first.token : await fresh();
      },
      WebSocket: net.Socket,
      reconnect: RECONNECT,
    }),
  });
  const fixedNet = cuttable();
  await using fixed = await DuplexSession.start({
    transport: remote({
      url: setup.relay.url,
      token: fixedFirst.token,
      WebSocket: fixedNet.Socket,
      reconnect: RECONNECT,
    }),
  });
  assert.equal((await session.send("before")).result.text, "before");
  assert.equal((await fixed.send("before")).result.text, "before");
  assert.deepEqual(calls, ["first"], "called once for the first connection");

  await waitUntil(Math.max(first.refusedAfter, fixedFirst.refusedAfter));

  await t.step("the token function's session resumes with a fresh token", async () => {
    net.cut();
    assert.equal((await session.send("after")).result.text, "after");
    assert.deepEqual(calls, ["first", "fresh"], "called once more, for the reconnection");
    net.cut();
    assert.equal((await session.send("again")).result.text, "again");
    assert.deepEqual(calls, ["first", "fresh", "fresh"]);
  });

  await t.step("the fixed token's session ends unauthorized", async () => {
    fixedNet.cut();
    const status = await fixed.waitForExit({ signal: AbortSignal.timeout(10_000) });
    assert.equal(status.state, "failed");
    const reason = status.state === "failed" ? status.exit.reason ?? "" : "";
    assert.match(reason, /cannot resume the session: unauthorized/);
    assert.match(reason, /expired/);
  });
});

Deno.test("remote() fails the connect, typed, when the token function gives no token", async (t) => {
  await using setup = await startRelay({ tokens: [], secrets: [SECRET] });
  const url = setup.relay.url;
  const start = (token: Parameters<typeof remote>[0]["token"], connectTimeoutMs = 2000) =>
    DuplexSession.start({ transport: remote({ url, token, connectTimeoutMs, reconnect: false }) });

  await t.step("a function that throws: unauthorized, its error the cause", async () => {
    const boom = new Error("the token server is down");
    await assert.rejects(
      start(() => {
        throw boom;
      }),
      (error: unknown) => {
        assert.ok(isDuplexError(error, "unauthorized"), String(error));
        assert.equal(error.cause, boom);
        assert.match(error.message, /token function failed: the token server is down/);
        return true;
      },
    );
    await assert.rejects(
      start(() => Promise.reject(new Error("nope"))),
      (error: unknown) => isDuplexError(error, "unauthorized"),
    );
  });

  await t.step("a function that returns no non-empty string: invalid_argument", async () => {
    for (const value of [42, "", undefined, { token: "x" }]) {
      await assert.rejects(
        start(() => value as unknown as string),
        (error: unknown) =>
          isDuplexError(error, "invalid_argument") && /non-empty string/.test(error.message),
      );
    }
  });

  await t.step("a function too slow: timeout, its signal aborted", async () => {
    let aborted: AbortSignal | undefined;
    await assert.rejects(
      start(({ signal }) => {
        aborted = signal;
        return new Promise<string>(() => {});
      }, 150),
      (error: unknown) => isDuplexError(error, "timeout") && /within 150 ms/.test(error.message),
    );
    assert.equal(aborted?.aborted, true);
  });

  await t.step("a fresh token the relay refuses: unauthorized", async () => {
    const foreign = await mintRelayToken({
      secret: "another-secret-of-at-least-32-bytes-0123",
      subject: "user-1",
      ttlSeconds: 60,
    });
    await assert.rejects(
      start(() => foreign),
      (error: unknown) => isDuplexError(error, "unauthorized"),
    );
  });

  await t.step("the start signal's reason passes through unchanged", async () => {
    const controller = new AbortController();
    const reason = new Error("the user left");
    const factory = remote({ url, token: () => new Promise<string>(() => {}), reconnect: false });
    const opening = factory({ signal: controller.signal });
    controller.abort(reason);
    await assert.rejects(opening, (error: unknown) => error === reason);
  });

  await t.step("a non-function, non-string token is a TypeError", () => {
    assert.throws(() => remote({ url, token: 7 as unknown as string }), TypeError);
  });
});

Deno.test("remote() retries a reconnection whose token function failed", async () => {
  await using setup = await startRelay({ tokens: [], secrets: [SECRET] });
  let calls = 0;
  const net = cuttable();
  await using session = await DuplexSession.start({
    transport: remote({
      url: setup.relay.url,
      token: () => {
        calls++;
        if (calls === 2) throw new Error("a transient failure");
        return fresh();
      },
      WebSocket: net.Socket,
      reconnect: RECONNECT,
    }),
  });
  assert.equal((await session.send("one")).result.text, "one");
  net.cut();
  assert.equal((await session.send("two")).result.text, "two");
  assert.equal(calls, 3, "the first connection, the failed attempt, the one that resumed");
});
