import assert from "node:assert/strict";
import { StderrTail, truncateToBytes } from "../../../adapters/subprocess/_stderr_tail.ts";
import { utf8Length } from "../../../src/_utf8.ts";
import { LinePipe, OutputPipe } from "../../../adapters/subprocess/_pipes.ts";

const encoder = new TextEncoder();

Deno.test({
  name: "utf8Length() counts UTF-8 bytes without encoding",
  permissions: "none",
  fn: () => {
    for (const text of ["", "abc", "é", "€uro", "😀", "a😀b", "\ud800", "x\udc00y"]) {
      assert.equal(utf8Length(text), encoder.encode(text).length, JSON.stringify(text));
    }
  },
});

Deno.test({
  name: "truncateToBytes() cuts at a character boundary and marks the cut",
  permissions: "none",
  fn: () => {
    assert.equal(truncateToBytes("short", 10), "short");
    const cut = truncateToBytes("😀".repeat(10), 20);
    assert.ok(utf8Length(cut) <= 20, cut);
    assert.ok(cut.endsWith("…(truncated)"));
    assert.ok(!cut.includes("\ufffd"));
  },
});

Deno.test({
  name: "StderrTail.push() keeps the newest lines within the bounds",
  permissions: "none",
  fn: async (t) => {
    await t.step("by lines", () => {
      const tail = new StderrTail(1024, 3);
      for (let i = 0; i < 10; i++) tail.push(`l${i}`);
      assert.equal(tail.text(), "l7\nl8\nl9");
      assert.equal(tail.length, 3);
      assert.equal(tail.dropped, 7);
    });
    await t.step("by bytes, newlines included", () => {
      const tail = new StderrTail(10, 100);
      for (const line of ["aaaa", "bbbb", "cccc"]) tail.push(line);
      assert.equal(tail.text(), "bbbb\ncccc");
      assert.ok(utf8Length(tail.text()) <= 10);
    });
    await t.step("a line longer than the bound is cut", () => {
      const tail = new StderrTail(32, 100);
      tail.push("x".repeat(100));
      assert.equal(tail.length, 1);
      assert.ok(utf8Length(tail.text()) < 32);
      assert.ok(tail.text().endsWith("…(truncated)"));
    });
    await t.step("shift() and clear()", () => {
      const tail = new StderrTail(1024, 10);
      tail.push("a");
      tail.push("b");
      assert.equal(tail.shift(), "a");
      assert.equal(tail.bytes, 2);
      tail.clear();
      assert.equal(tail.shift(), undefined);
      assert.equal(tail.text(), "");
    });
    await t.step("many pushes stay bounded", () => {
      const tail = new StderrTail(100, 5);
      for (let i = 0; i < 50_000; i++) tail.push(`line ${i}`);
      assert.equal(
        tail.text(),
        [49995, 49996, 49997, 49998, 49999].map((i) => `line ${i}`).join("\n"),
      );
    });
  },
});

function bytes(...chunks: string[]): ReadableStream<Uint8Array> {
  return ReadableStream.from(chunks.map((chunk) => encoder.encode(chunk)));
}

const BOUNDS = { maxLineLength: 64 * 1024, queueLines: 100, queueBytes: 1 << 20 };

Deno.test({
  name: "LinePipe splits stderr into lines however it is chunked",
  permissions: "none",
  fn: async (t) => {
    const cases: ReadonlyArray<readonly [string, string[], string[]]> = [
      ["one chunk", ["a\nb\n"], ["a", "b"]],
      ["split lines", ["a", "b\nc", "\n"], ["ab", "c"]],
      ["CRLF", ["a\r\nb\r", "\n"], ["a", "b"]],
      ["no final newline", ["a\nb"], ["a", "b"]],
      ["empty lines", ["\n\n"], ["", ""]],
      ["nothing", [], []],
      ["split UTF-8", ["é", "\n"], ["é"]],
    ];
    for (const [name, chunks, expected] of cases) {
      await t.step(name, async () => {
        const tail = new StderrTail(1024, 100);
        const pipe = new LinePipe(bytes(...chunks), tail, BOUNDS);
        assert.deepEqual(await Array.fromAsync(pipe.readable), expected);
        await pipe.finish(1000);
        assert.equal(tail.text(), expected.join("\n"));
      });
    }
    await t.step("UTF-8 split across chunks", async () => {
      const euro = encoder.encode("€\n");
      const stream = ReadableStream.from([euro.slice(0, 1), euro.slice(1)]);
      const pipe = new LinePipe(stream, new StderrTail(1024, 10), BOUNDS);
      assert.deepEqual(await Array.fromAsync(pipe.readable), ["€"]);
    });
  },
});

Deno.test({
  name: "LinePipe cuts long lines and drops the oldest unread lines",
  permissions: "none",
  fn: async (t) => {
    await t.step("a long line is cut", async () => {
      const pipe = new LinePipe(
        bytes("x".repeat(30), "y".repeat(30), "\nshort\n"),
        new StderrTail(1024, 10),
        { ...BOUNDS, maxLineLength: 40 },
      );
      assert.deepEqual(await Array.fromAsync(pipe.readable), [
        "x".repeat(30) + "y".repeat(10) + "…(20 more characters cut)",
        "short",
      ]);
    });
    await t.step("unread lines beyond the queue are dropped, oldest first", async () => {
      const lines = Array.from({ length: 1000 }, (_, i) => `l${i}\n`);
      const tail = new StderrTail(1 << 20, 10_000);
      const pipe = new LinePipe(bytes(...lines), tail, { ...BOUNDS, queueLines: 10 });
      await pipe.finish(1000);
      assert.deepEqual(
        await Array.fromAsync(pipe.readable),
        Array.from({ length: 10 }, (_, i) => `l${990 + i}`),
      );
      assert.equal(pipe.dropped, 990);
      assert.equal(tail.length, 1000);
    });
    await t.step("a cancelled stream still fills the tail", async () => {
      const tail = new StderrTail(1024, 10);
      const pipe = new LinePipe(bytes("a\n", "b\n"), tail, BOUNDS);
      await pipe.readable.cancel();
      await pipe.finish(1000);
      assert.equal(tail.text(), "a\nb");
    });
  },
});

Deno.test({
  name: "OutputPipe passes bytes through unchanged",
  permissions: "none",
  fn: async (t) => {
    await t.step("pulled by the consumer", async () => {
      const chunks = [encoder.encode("ab"), encoder.encode("c\nd"), encoder.encode("\n")];
      const pipe = new OutputPipe(ReadableStream.from(chunks));
      assert.deepEqual(await Array.fromAsync(pipe.readable), chunks);
      assert.ok(pipe.ended);
    });
    await t.step("finish() reads the rest for a later reader", async () => {
      const chunks = [encoder.encode("1"), encoder.encode("2")];
      const pipe = new OutputPipe(ReadableStream.from(chunks));
      await pipe.finish(1000);
      assert.ok(pipe.ended);
      assert.deepEqual(await Array.fromAsync(pipe.readable), chunks);
    });
    await t.step("finish() gives up a pipe that never ends, keeping what was read", async () => {
      let cancelled = false;
      const source = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode("kept"));
        },
        cancel() {
          cancelled = true;
        },
      });
      const pipe = new OutputPipe(source);
      await pipe.finish(50);
      assert.ok(cancelled);
      assert.deepEqual(await Array.fromAsync(pipe.readable), [encoder.encode("kept")]);
    });
    await t.step("cancel by the consumer cancels the source", async () => {
      let reason: unknown;
      const source = new ReadableStream<Uint8Array>({
        cancel(why) {
          reason = why;
        },
      });
      const pipe = new OutputPipe(source);
      await pipe.readable.cancel("done");
      assert.equal(reason, "done");
      assert.ok(pipe.ended);
      await pipe.finish(1000);
    });
  },
});
