/**
 * The typed parsers of the relay wire: every field checked, each refusal says
 * which; the bearer subprotocol.
 */

import assert from "node:assert/strict";
import {
  parseClientFrame,
  parseClientMessage,
  parseRelayMessage,
  parseSpawnRequest,
} from "../../../src/wire/wire_parse.ts";
import { base64url } from "../../../src/codec/base64url.ts";
import { BEARER_PREFIX, bearerProtocol, tokenFromProtocol } from "../../../src/wire/wire.ts";

const json = JSON.stringify;

Deno.test("parseClientMessage() takes each client message, checking every field", {
  permissions: "none",
}, async (t) => {
  await t.step("well-formed messages come back as they are", () => {
    for (
      const message of [
        { t: "hello", v: 1 },
        { t: "hello", v: 1, spawn: { model: "sonnet", maxTurns: 2, includePartialMessages: true } },
        { t: "hello", v: 1, resume: { session: "s", after: 0 } },
        { t: "hello", v: 1, resume: { session: "s", after: 4, applied: 2 } },
        { t: "hello", v: 1, resume: { session: "s", after: 4, applied: 2, answered: "u-7" } },
        { t: "in", seq: 1, line: '{"a":1}' },
        { t: "ack", seq: 0 },
        { t: "eof" },
        { t: "close" },
        { t: "ping", at: 5 },
        { t: "pong", at: 5 },
      ]
    ) {
      assert.deepEqual(parseClientMessage(json(message)), { ok: true, message });
    }
  });
  await t.step("fields a message type does not have are left out", () => {
    assert.deepEqual(parseClientMessage(json({ t: "eof", extra: 1 })), {
      ok: true,
      message: { t: "eof" },
    });
  });
  await t.step("malformed messages are refused with the reason", () => {
    for (
      const [text, reason] of [
        ["not json", /must be JSON/],
        [json([1]), /a JSON object with a string t/],
        [json({ t: 1 }), /a JSON object with a string t/],
        [json({ t: "bogus" }), /Unexpected message "bogus"/],
        [json({ t: "hello", v: 2 }), /Unsupported protocol version 2/],
        [json({ t: "hello", v: 1, spawn: {}, resume: { session: "s", after: 0 } }), /not both/],
        [json({ t: "hello", v: 1, resume: { session: "s" } }), /needs resume/],
        [json({ t: "hello", v: 1, resume: { session: 1, after: 0 } }), /needs resume/],
        [
          json({ t: "hello", v: 1, resume: { session: "s", after: 0, applied: -1 } }),
          /needs resume/,
        ],
        [
          json({ t: "hello", v: 1, resume: { session: "s", after: 0, applied: "2" } }),
          /needs resume/,
        ],
        [json({ t: "hello", v: 1, resume: { session: "s", after: 0, answered: 7 } }), /answered\?/],
        [
          json({ t: "hello", v: 1, resume: { session: "s", after: 0, answered: "" } }),
          /needs resume/,
        ],
        [
          json({ t: "hello", v: 1, resume: { session: "s", after: 0, answered: "u".repeat(129) } }),
          /1 to 128 characters/,
        ],
        [json({ t: "hello", v: 1, spawn: [] }), /spawn request must be an object/],
        [json({ t: "hello", v: 1, spawn: { model: 1 } }), /model must be a string/],
        [json({ t: "hello", v: 1, spawn: { maxTurns: 0 } }), /maxTurns must be a positive/],
        [json({ t: "in", seq: 0, line: "{}" }), /needs seq: an integer >= 1/],
        [json({ t: "in", seq: 1.5, line: "{}" }), /needs seq/],
        [json({ t: "in", seq: 1, line: "{}\n{}" }), /line: a string without newlines/],
        [json({ t: "in", seq: 1 }), /needs line/],
        [json({ t: "ack", seq: -1 }), /An ack message needs seq/],
        [json({ t: "ping" }), /A ping message needs at: a number/],
      ] as const
    ) {
      const parsed = parseClientMessage(text);
      assert.equal(parsed.ok, false, text);
      if (!parsed.ok) assert.match(parsed.reason, reason, text);
    }
  });
});

Deno.test("parseClientFrame() takes one message or a batch, checked whole", {
  permissions: "none",
}, () => {
  assert.deepEqual(parseClientFrame(json({ t: "eof" })), { ok: true, message: [{ t: "eof" }] });
  const batch = [{ t: "in", seq: 1, line: "{}" }, { t: "ack", seq: 3 }];
  assert.deepEqual(parseClientFrame(json(batch)), { ok: true, message: batch });
  const empty = parseClientFrame("[]");
  assert.ok(!empty.ok && /non-empty JSON array/.test(empty.reason));
  const bad = parseClientFrame(json([{ t: "in", seq: 1, line: "{}" }, { t: "in", seq: 0 }]));
  assert.ok(!bad.ok && /needs seq/.test(bad.reason), "one bad message refuses the frame");
  const nested = parseClientFrame(json([[{ t: "eof" }]]));
  assert.equal(nested.ok, false);
});

Deno.test("parseSpawnRequest() lets unknown options through for the policy to refuse", {
  permissions: "none",
}, () => {
  const request = { model: "sonnet", mcpConfig: "{}" };
  const parsed = parseSpawnRequest(request);
  assert.ok(parsed.ok);
  assert.equal(parsed.message, request, "the same object: unknown options pass through");
  assert.equal(parseSpawnRequest(null).ok, false);
  assert.equal(parseSpawnRequest({ cwd: 1 }).ok, false);
  assert.equal(parseSpawnRequest({ resume: false }).ok, false);
  assert.equal(parseSpawnRequest({ includePartialMessages: "yes" }).ok, false);
});

Deno.test("parseRelayMessage() takes each relay message, checking every field", {
  permissions: "none",
}, async (t) => {
  const exit = { code: 0, signal: null, stderrTail: "tail", requested: false };
  await t.step("well-formed messages come back as they are", () => {
    for (
      const message of [
        { t: "ready", session: "s", resumed: false, inSeq: 0, graceMs: 30_000 },
        { t: "ready", session: "s", resumed: true, inSeq: 4, pid: 12, graceMs: null },
        {
          t: "ready",
          session: "s",
          resumed: true,
          inSeq: 4,
          graceMs: 1,
          gone: { inSeq: 4, outSeq: 9 },
        },
        {
          t: "ready",
          session: "s",
          resumed: true,
          inSeq: 4,
          graceMs: 1,
          gone: { inSeq: 4, outSeq: 9, uuids: ["u5"] },
        },
        { t: "err", seq: 1, line: "warning" },
        { t: "exit", seq: 2, exit },
        { t: "exit", seq: 2, exit: { ...exit, code: null, signal: "SIGTERM", closeCode: 1000 } },
        { t: "exit", seq: 2, exit: { ...exit, reason: "why" } },
        { t: "ack", seq: 3 },
        { t: "error", kind: "busy", message: "later" },
        { t: "ping", at: 1 },
        { t: "pong", at: 1 },
      ]
    ) {
      assert.deepEqual(parseRelayMessage(json(message)), { ok: true, message });
    }
  });
  await t.step("an exit may leave out its stderr tail and requested", () => {
    assert.deepEqual(
      parseRelayMessage(json({ t: "exit", seq: 1, exit: { code: 1, signal: null } })),
      {
        ok: true,
        message: {
          t: "exit",
          seq: 1,
          exit: { code: 1, signal: null, stderrTail: "", requested: true },
        },
      },
    );
  });
  await t.step("malformed messages are refused with the reason", () => {
    for (
      const [message, reason] of [
        [{ t: "ready", resumed: false, inSeq: 0, graceMs: 1 }, /needs session/],
        [{ t: "ready", session: "", resumed: false, inSeq: 0, graceMs: 1 }, /needs session/],
        [{ t: "ready", session: "s", inSeq: 0, graceMs: 1 }, /needs resumed/],
        [{ t: "ready", session: "s", resumed: false, graceMs: 1 }, /needs inSeq/],
        [{ t: "ready", session: "s", resumed: false, inSeq: 0, pid: -1, graceMs: 1 }, /needs pid/],
        [{ t: "ready", session: "s", resumed: false, inSeq: 0 }, /needs graceMs/],
        [{ t: "ready", session: "s", resumed: true, inSeq: 0, graceMs: 1, gone: 3 }, /needs gone/],
        [
          { t: "ready", session: "s", resumed: true, inSeq: 0, graceMs: 1, gone: { inSeq: 1 } },
          /needs gone/,
        ],
        [
          {
            t: "ready",
            session: "s",
            resumed: true,
            inSeq: 0,
            graceMs: 1,
            gone: { inSeq: 1, outSeq: 1, uuids: [""] },
          },
          /needs gone/,
        ],
        [{ t: "err", seq: 0, line: "x" }, /An err message needs seq: an integer >= 1/],
        [{ t: "err", seq: 1 }, /needs line/],
        [{ t: "exit", seq: 1 }, /needs exit: an object/],
        [{ t: "exit", seq: 1, exit: { ...exit, code: "0" } }, /needs exit\.code/],
        [{ t: "exit", seq: 1, exit: { ...exit, signal: 9 } }, /needs exit\.signal/],
        [{ t: "exit", seq: 1, exit: { ...exit, closeCode: "x" } }, /needs exit\.closeCode/],
        [{ t: "exit", seq: 1, exit: { ...exit, reason: 1 } }, /needs exit\.reason/],
        [{ t: "exit", seq: 1, exit: { ...exit, stderrTail: null } }, /needs exit\.stderrTail/],
        [{ t: "exit", seq: 1, exit: { ...exit, requested: "no" } }, /needs exit\.requested/],
        [{ t: "ack" }, /needs seq/],
        [{ t: "error", kind: "teapot", message: "x" }, /needs kind: one of unauthorized/],
        [{ t: "error", kind: "busy" }, /needs message/],
        [{ t: "pong", at: "now" }, /needs at/],
        [{ t: "out" }, /Unexpected message "out"/],
      ] as const
    ) {
      const parsed = parseRelayMessage(json(message));
      assert.equal(parsed.ok, false, json(message));
      if (!parsed.ok) assert.match(parsed.reason, reason, json(message));
    }
  });
});

Deno.test({
  name: "tokenFromProtocol() reads what bearerProtocol() writes and nothing else",
  permissions: "none",
  fn() {
    const token = "tok-é\u{1F600}";
    assert.equal(tokenFromProtocol(bearerProtocol(token)), token);
    assert.equal(tokenFromProtocol("duplex-claude.v1"), undefined, "not a bearer subprotocol");
    const prefix = BEARER_PREFIX;
    assert.equal(tokenFromProtocol(`${prefix}a`), undefined, "not base64url");
    assert.equal(
      tokenFromProtocol(`${prefix}${base64url(Uint8Array.of(0xff))}`),
      undefined,
      "not UTF-8",
    );
  },
});
