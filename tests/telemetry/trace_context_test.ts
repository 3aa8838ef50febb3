/**
 * The trace context of a hello: W3C Trace Context Level 1 checked as the
 * relay reads it (`parseTraceparent`, `parseTraceContext`), and the hello
 * parser keeping a valid one and dropping a malformed one (the hello is
 * still taken).
 */

import assert from "node:assert/strict";
import { parseTraceContext, parseTraceparent } from "../../src/telemetry/_trace_context.ts";
import { parseClientFrame, parseClientMessage } from "../../src/wire/wire_parse.ts";

const NONE = { permissions: "none" } as const;
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
const VALID = `00-${TRACE_ID}-${SPAN_ID}-01`;

Deno.test("parseTraceparent() takes W3C traceparents and nothing else", NONE, async (t) => {
  await t.step("version 00, and a later version's first four fields", () => {
    assert.deepEqual(parseTraceparent(VALID), {
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 1,
    });
    assert.equal(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)?.traceFlags, 0);
    assert.equal(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-03-later`)?.traceFlags, 3);
    assert.equal(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-01`)?.spanId, SPAN_ID);
  });
  await t.step("refused: what W3C calls invalid", () => {
    for (
      const text of [
        `ff-${TRACE_ID}-${SPAN_ID}-01`, // version ff
        `00-${TRACE_ID}-${SPAN_ID}-01-extra`, // version 00 has exactly four fields
        `00-${"0".repeat(32)}-${SPAN_ID}-01`, // all-zero trace id
        `00-${TRACE_ID}-${"0".repeat(16)}-01`, // all-zero parent id
        VALID.toUpperCase(), // uppercase hex
        ` ${VALID}`,
        `${VALID}\n`,
        `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`, // short trace id
        `00-${TRACE_ID}-${SPAN_ID}-1`,
        `00_${TRACE_ID}_${SPAN_ID}_01`,
        `01-${TRACE_ID}-${SPAN_ID}-01-\u0000`, // a control character in what follows
        `01-${TRACE_ID}-${SPAN_ID}-01-${"x".repeat(600)}`, // too long
        "",
      ]
    ) {
      assert.equal(parseTraceparent(text), undefined, JSON.stringify(text));
    }
    for (const value of [undefined, null, 1, {}, [VALID]]) {
      assert.equal(parseTraceparent(value), undefined);
    }
  });
});

Deno.test("parseTraceContext() checks the tracestate apart from the traceparent", NONE, () => {
  const tracestate = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
  assert.deepEqual(parseTraceContext({ traceparent: VALID, tracestate }), {
    traceparent: VALID,
    tracestate,
  });
  assert.deepEqual(
    parseTraceContext({ traceparent: VALID, tracestate: " a=1 ,, tenant@sys=x y " }),
    { traceparent: VALID, tracestate: "a=1,tenant@sys=x y" },
    "spaces around members and empty members are dropped",
  );
  assert.equal(
    parseTraceContext({ traceparent: `02-${TRACE_ID}-${SPAN_ID}-01-more` })?.traceparent,
    VALID,
    "a later version is passed on as version 00 of its checked fields",
  );
  // A malformed tracestate is dropped; the traceparent stays.
  for (
    const bad of [
      "Upper=1",
      "a=1,a=2",
      "a=",
      "a=x,y",
      "=1",
      "a=b=c",
      "a=1 \u00e9",
      Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","),
      `a=${"v".repeat(600)}`,
      "",
      42,
    ]
  ) {
    assert.deepEqual(parseTraceContext({ traceparent: VALID, tracestate: bad }), {
      traceparent: VALID,
    }, JSON.stringify(bad));
  }
  for (const bad of [undefined, null, VALID, [VALID], {}, { traceparent: "00-1-2-01" }]) {
    assert.equal(parseTraceContext(bad), undefined, JSON.stringify(bad));
  }
});

Deno.test("a hello's trace: kept when valid, dropped (never an error) when not", NONE, () => {
  const trace = { traceparent: VALID, tracestate: "rojo=1" };
  const spawn = parseClientMessage(JSON.stringify({ t: "hello", v: 1, spawn: {}, trace }));
  assert.deepEqual(spawn, { ok: true, message: { t: "hello", v: 1, spawn: {}, trace } });
  const resume = { session: "s", after: 3 };
  assert.deepEqual(parseClientMessage(JSON.stringify({ t: "hello", v: 1, resume, trace })), {
    ok: true,
    message: { t: "hello", v: 1, resume, trace },
  });
  assert.deepEqual(parseClientMessage(JSON.stringify({ t: "hello", v: 1, trace })), {
    ok: true,
    message: { t: "hello", v: 1, trace },
  });
  for (
    const bad of [
      "00-x",
      { traceparent: VALID.replace("00-", "ff-") },
      { traceparent: 7 },
      [trace],
      null,
    ]
  ) {
    const parsed = parseClientMessage(JSON.stringify({ t: "hello", v: 1, spawn: {}, trace: bad }));
    assert.deepEqual(parsed, { ok: true, message: { t: "hello", v: 1, spawn: {} } });
  }
  // Checked only in a hello: other messages leave the field out, as every unknown field.
  const frame = parseClientFrame(JSON.stringify([{ t: "eof", trace }]));
  assert.deepEqual(frame, { ok: true, message: [{ t: "eof" }] });
});
