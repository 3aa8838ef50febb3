import assert from "node:assert/strict";
import { DuplexError } from "../../src/errors.ts";
import { loadTranscript, parseTranscript } from "../../src/testing/transcript.ts";

const FIXTURES = new URL("../fixtures/transcripts/", import.meta.url);

Deno.test("parseTranscript() reads entries and skips blank lines", () => {
  const entries = parseTranscript(
    [
      '{"seq":0,"t_ms":0,"dir":"meta","msg":{"event":"spawn","bin":"claude","args":[]}}',
      "",
      '{"seq":1,"t_ms":1.5,"dir":"stdout","msg":{"type":"keep_alive"}}\r',
      '{"seq":2,"t_ms":2,"dir":"stderr","raw":"warning: x"}',
      "   ",
    ].join("\n"),
  );
  assert.deepEqual(entries, [
    { seq: 0, tMs: 0, dir: "meta", msg: { event: "spawn", bin: "claude", args: [] } },
    { seq: 1, tMs: 1.5, dir: "stdout", msg: { type: "keep_alive" } },
    { seq: 2, tMs: 2, dir: "stderr", raw: "warning: x" },
  ]);
  assert.deepEqual(parseTranscript(""), []);
});

Deno.test("parseTranscript() rejects a bad line with its line number", async (t) => {
  const good = '{"seq":0,"t_ms":0,"dir":"stdin","msg":{"type":"keep_alive"}}';
  const cases: [string, string, RegExp][] = [
    ["not JSON", "{oops", /line 2: it is not JSON/],
    ["not an object", "[1,2]", /line 2: it is not a JSON object/],
    ["seq missing", '{"t_ms":0,"dir":"stdin","msg":{}}', /line 2: "seq" is not a number/],
    ["t_ms wrong", '{"seq":1,"t_ms":"0","dir":"stdin","msg":{}}', /line 2: "t_ms"/],
    ["dir unknown", '{"seq":1,"t_ms":0,"dir":"stdweird","msg":{}}', /line 2: "dir"/],
    ["msg not object", '{"seq":1,"t_ms":0,"dir":"stdout","msg":"x"}', /line 2: "msg"/],
    ["raw not string", '{"seq":1,"t_ms":0,"dir":"stderr","raw":1}', /line 2: "raw"/],
    ["neither", '{"seq":1,"t_ms":0,"dir":"stdout"}', /line 2: it has neither/],
    ["meta without event", '{"seq":1,"t_ms":0,"dir":"meta","msg":{}}', /line 2: a meta entry/],
  ];
  for (const [name, line, message] of cases) {
    await t.step(name, () => {
      assert.throws(
        () => parseTranscript(`${good}\n${line}\n${good}`),
        (error: unknown) => {
          assert.ok(error instanceof DuplexError);
          assert.equal(error.kind, "protocol");
          assert.match(error.message, message);
          assert.equal(error.excerpt, line);
          return true;
        },
      );
    });
  }
});

Deno.test("loadTranscript() loads every recorded fixture", async () => {
  let count = 0;
  for await (const file of Deno.readDir(FIXTURES)) {
    if (!file.name.endsWith(".ndjson")) continue;
    const entries = await loadTranscript(new URL(file.name, FIXTURES));
    assert.ok(entries.length > 0, file.name);
    assert.equal(entries[0]?.dir, "meta", file.name);
    assert.equal(entries.at(-1)?.msg?.event, "exit", file.name);
    assert.ok(entries.every((e, i) => e.seq === i), `${file.name}: seq runs from 0`);
    count += 1;
  }
  assert.ok(count >= 10);
});

Deno.test("loadTranscript() accepts a string URL and fails clearly on a missing file", async () => {
  const url = new URL("01-duplex-two-turns.ndjson", FIXTURES);
  assert.equal((await loadTranscript(url.href)).length, 17);
  await assert.rejects(
    () => loadTranscript(new URL("does-not-exist.ndjson", FIXTURES)),
    (error: unknown) => {
      assert.ok(error instanceof DuplexError);
      assert.equal(error.kind, "invalid_argument");
      assert.match(error.message, /^Cannot load transcript from file:.*does-not-exist\.ndjson: /);
      return true;
    },
  );
});

Deno.test("loadTranscript() rejects with the signal's reason when aborted", async () => {
  const controller = new AbortController();
  const reason = new Error("stop");
  controller.abort(reason);
  await assert.rejects(
    () => loadTranscript(new URL("01-duplex-two-turns.ndjson", FIXTURES), controller),
    (error: unknown) => error === reason,
  );
});
