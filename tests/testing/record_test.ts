import assert from "node:assert/strict";
import {
  DuplexSession,
  type ExitStatus,
  type PermissionRequest,
  type TransportFactory,
} from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { sleep } from "../../src/_deadline.ts";
import { DuplexError } from "../../src/errors.ts";
import {
  assistantTextFrame,
  canUseToolRequest,
  initFrame,
  resultFrame,
} from "../../src/testing/frames.ts";
import { conformanceCli } from "../../src/testing/conformance_peer.ts";
import { record, type RecordOptions } from "../../src/testing/record_transport.ts";
import { runTransportConformance } from "../../src/testing/transport_conformance.ts";
import type { Redaction } from "../../src/testing/redaction.ts";
import { replay } from "../../src/testing/replay_transport.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { parseTranscript, type TranscriptEntry } from "../../src/testing/transcript.ts";
import { FrameReader, openContext, userLine } from "./_frame_reader.ts";
import { fakeOptions } from "../adapters/subprocess/_helpers.ts";

/** A stand-in CLI: echoes, and asks to run Bash for a prompt holding "[[tool]]". */
function cliWithTool(): ScriptedCli {
  const cli = new ScriptedCli({ echo: true, sessionId: "rec-session" });
  cli.on((f) => f.type === "user" && JSON.stringify(f).includes("[[tool]]"), async (frame, c) => {
    c.emit(initFrame({ sessionId: "rec-session" }));
    c.emit(canUseToolRequest({ requestId: "perm-1", toolName: "Bash", input: { command: "ls" } }));
    const answer = await c.nextWrite("control_response");
    const behavior = (answer.response as { response: { behavior: string } }).response.behavior;
    const text = `Bash was ${behavior === "allow" ? "allowed" : "denied"}`;
    return [
      assistantTextFrame(text),
      resultFrame({ text, userMessageUuid: String(frame.uuid) }),
    ];
  });
  return cli;
}

/** The code under test: two turns, the second asks a permission; `decide` answers it. */
async function scenario(
  transport: TransportFactory,
  decide: (request: PermissionRequest) => "allow" | "deny" = () => "allow",
): Promise<string[]> {
  const session = await DuplexSession.start({
    transport,
    onPermission: (request) =>
      decide(request) === "allow"
        ? { behavior: "allow" }
        : { behavior: "deny", message: "not today" },
  });
  try {
    const first = await session.send("hello");
    const second = await session.send("please list [[tool]]");
    return [first.result.text, second.result.text];
  } finally {
    await session.close();
  }
}

/** A sink that keeps the lines. */
function memorySink(): { lines: string[]; to: RecordOptions["to"]; entries(): TranscriptEntry[] } {
  const lines: string[] = [];
  return {
    lines,
    to: (line) => void lines.push(line),
    entries: () => parseTranscript(lines.join("")),
  };
}

Deno.test("record() writes a session as a transcript that replay() plays to the same code", async (t) => {
  const sink = memorySink();
  const live = await scenario(record(cliWithTool().transport, { to: sink.to }));
  assert.deepEqual(live, ["Echo: hello", "Bash was allowed"]);
  const entries = sink.entries();

  await t.step("the transcript has the shared fixtures' shape", () => {
    assert.ok(sink.lines.every((line) => line.endsWith("\n") && !line.slice(0, -1).includes("\n")));
    assert.deepEqual(entries.map((e) => e.seq), entries.map((_, i) => i));
    assert.ok(entries.every((e, i) => i === 0 || e.tMs >= entries[i - 1]!.tMs));
    assert.deepEqual(entries[0]!.msg, {
      event: "spawn",
      transport: "scripted",
      description: "ScriptedCli",
    });
    assert.deepEqual(entries.at(-2)!.msg, { event: "stdin_end" });
    assert.deepEqual(entries.at(-1)!.msg, { event: "exit", code: 0, signal: null });
    const stdin = entries.filter((e) => e.dir === "stdin").map((e) => e.msg!.type);
    assert.deepEqual(stdin, ["user", "user", "control_response"]);
    const results = entries.filter((e) => e.dir === "stdout" && e.msg?.type === "result");
    assert.deepEqual(results.map((e) => e.msg!.result), ["Echo: hello", "Bash was allowed"]);
    const ask = entries.findIndex((e) => e.msg?.type === "control_request");
    const answer = entries.findIndex((e) => e.msg?.type === "control_response");
    assert.ok(ask > 0 && answer > ask, "the answer follows the question");
  });

  await t.step("the replay answers the same code with no CLI at all", async () => {
    const cli = replay(entries);
    assert.deepEqual(await scenario(cli.transport), live);
    cli.verify();
    assert.equal(cli.complete, true);
    assert.deepEqual(cli.mismatches, []);
  });

  await t.step("verify() says what was next when the code stops early", async () => {
    const cli = replay(entries);
    const session = await DuplexSession.start({ transport: cli.transport });
    await session.send("hello");
    await session.close();
    assert.throws(() => cli.verify(), (error: unknown) => {
      assert.ok(error instanceof DuplexError && error.kind === "protocol");
      assert.match(error.message, /stopped before the end .*next expected: user "please list/);
      return true;
    });
  });
});

Deno.test("record() writes each entry as it happens, before the session ends", async () => {
  const sink = memorySink();
  const session = await DuplexSession.start({
    transport: record(cliWithTool().transport, { to: sink.to }),
  });
  await session.send("first");
  const soFar = sink.entries();
  assert.ok(soFar.some((e) => e.msg?.type === "result" && e.msg.result === "Echo: first"));
  assert.ok(!soFar.some((e) => e.dir === "meta" && e.msg?.event === "exit"));
  await session.close();
  assert.equal(sink.entries().at(-1)!.msg!.event, "exit");
});

Deno.test("replay() of a recorded stream: a different answer fails verify() with a diff", async () => {
  const chunks: Uint8Array[] = [];
  let closed = false;
  const to = new WritableStream<Uint8Array>({
    write: (chunk) => void chunks.push(chunk),
    close: () => void (closed = true),
  });
  await scenario(record(cliWithTool().transport, { to }));
  assert.ok(closed, "the stream is closed after the exit entry");
  const bytes = chunks.flatMap((chunk) => [...chunk]);
  const text = new TextDecoder().decode(new Uint8Array(bytes));
  const lineOfAnswer = text.split("\n").findIndex((l) => l.includes('"control_response"')) + 1;
  const url = `data:application/x-ndjson;base64,${btoa(String.fromCharCode(...bytes))}`;

  const same = replay(url);
  assert.deepEqual(await scenario(same.transport), ["Echo: hello", "Bash was allowed"]);
  same.verify();

  const other = replay(new URL(url), { waitTimeoutMs: 2000 });
  await assert.rejects(scenario(other.transport, () => "deny"), DuplexError);
  assert.equal(other.mismatches.length, 1);
  const diff = other.diff ?? "";
  assert.match(diff, /^Replay mismatch: stdin #\d+: control_response\/success \(allow\) differs/);
  assert.match(diff, new RegExp(`recorded: transcript line ${lineOfAnswer} \\(seq \\d+\\)`));
  assert.match(diff, /written: {2}the session's write #3\n/);
  assert.match(diff, /first difference at response\.response\.behavior\n/);
  assert.match(diff, /^ {2}- {7}"behavior": "allow",$/m);
  assert.match(diff, /^ {2}\+ {7}"behavior": "deny",$/m);
  assert.match(diff, /^ {2}\+ {7}"message": "not today"$/m);
  assert.doesNotMatch(diff, /^ {2}[-+].*request_id/m, "learned ids are not differences");
  assert.throws(() => other.verify(), (error: unknown) => {
    assert.ok(error instanceof DuplexError && error.kind === "protocol");
    assert.equal(error.message, diff);
    return true;
  });
});

Deno.test("record() redacts keys, paths, patterns and by function; replay() with the same rules matches", async (t) => {
  const key = "sk-ant-api03-Abc_def-123456789";
  const home = "/home/alice";
  const prompt = `use ${key} in ${home}/project for ACME-4471`;
  const rules: Redaction[] = [
    { match: home, replace: "~" },
    /ACME-\d+/,
    (text) => text.replaceAll("project", "proj"),
  ];
  const run = async (transport: TransportFactory) => {
    await using session = await DuplexSession.start({ transport });
    return (await session.send(prompt)).result.text;
  };

  await t.step("nothing named reaches the transcript", async () => {
    const sink = memorySink();
    assert.equal(
      await run(record(new ScriptedCli({ echo: true }).transport, {
        to: sink.to,
        redact: rules,
      })),
      `Echo: ${prompt}`,
      "the session itself sees everything",
    );
    const text = sink.lines.join("");
    assert.ok(!text.includes(key) && !text.includes(home) && !text.includes("ACME"), text);
    assert.match(text, /use \[redacted\] in ~\/proj for \[redacted\]/);

    const cli = replay(sink.entries(), { redact: rules });
    assert.equal(await run(cli.transport), "Echo: use [redacted] in ~/proj for [redacted]");
    cli.verify();
  });

  await t.step("without options, replay() hides API keys as record() did", async () => {
    const sink = memorySink();
    assert.equal(
      await run(record(new ScriptedCli({ echo: true }).transport, { to: sink.to })),
      `Echo: ${prompt}`,
    );
    assert.ok(!sink.lines.join("").includes(key), "the key is hidden by default");
    const cli = replay(sink.entries(), { waitTimeoutMs: 2000 });
    assert.equal(await run(cli.transport), `Echo: use [redacted] in ${home}/project for ACME-4471`);
    cli.verify();
    const kept = replay(sink.entries(), { redactDefaults: false, waitTimeoutMs: 2000 });
    await assert.rejects(run(kept.transport), DuplexError);
    assert.match(kept.diff ?? "", /first difference at message\.content/);
  });

  await t.step("redactDefaults: false keeps API keys unless named", async () => {
    const sink = memorySink();
    await run(record(new ScriptedCli({ echo: true }).transport, {
      to: sink.to,
      redactDefaults: false,
    }));
    assert.ok(sink.lines.join("").includes(key));
  });

  await t.step("bad rules are refused before anything runs", () => {
    const to = () => {};
    const cli = new ScriptedCli({ echo: true }).transport;
    assert.throws(() => record(cli, { to, redact: [""] }), TypeError);
    assert.throws(() => record(cli, { to, redact: [42 as unknown as Redaction] }), TypeError);
    assert.throws(() => record(cli, { to, redact: "x" as unknown as Redaction[] }), TypeError);
    assert.throws(() => record(cli, {} as RecordOptions), TypeError);
    assert.throws(() => record(cli, { to, maxLineBytes: 0 }), RangeError);
    assert.throws(() => record(cli, { to, drainTimeoutMs: -1 }), RangeError);
    assert.throws(() => replay([], { redact: [""] }), TypeError);
  });
});

Deno.test("record() passes output through unchanged and records lines cut across chunks", async () => {
  const sink = memorySink();
  const cli = new ScriptedCli({ chunking: "bytes" });
  const transport = record(await cli.transport(openContext()), { to: sink.to, maxLineBytes: 600 });
  const reader = new FrameReader(transport);
  const long = "é".repeat(400);
  cli.emit(assistantTextFrame("héllo wörld"), { type: "long", text: long });
  cli.emitRaw("not json\n");
  cli.emitStderr("a warning");
  assert.equal((await reader.next()).type, "assistant");
  assert.equal((await reader.next()).text, long, "the session gets the long line whole");
  assert.equal(await reader.nextLine(), "not json");
  cli.exit({ code: 3 });
  assert.equal((await transport.closed).code, 3);
  const entries = sink.entries();
  const out = entries.filter((e) => e.dir === "stdout");
  assert.equal(JSON.stringify(out[0]!.msg).includes("héllo wörld"), true);
  assert.equal(out[1]!.msg, undefined, "a cut line is kept as text");
  assert.match(out[1]!.raw!, /^\{"type":"long","text":"é+$/, "cut at a character's start");
  const size = new TextEncoder().encode(JSON.stringify({ type: "long", text: long })).length;
  const cut = JSON.parse(sink.lines.find((line) => line.includes("long"))!);
  assert.equal(cut.truncated, size - 599, "the bytes dropped: 600, less half a character");
  assert.equal(out[2]!.raw, "not json");
  assert.deepEqual(entries.find((e) => e.dir === "stderr")?.raw, "a warning");
  assert.deepEqual(entries.at(-1)!.msg, { event: "exit", code: 3, signal: null });
});

Deno.test("record() closes the transport when the sink fails, and says why", async () => {
  let calls = 0;
  const session = await DuplexSession.start({
    transport: record(new ScriptedCli({ echo: true }).transport, {
      to: () => {
        if (++calls === 2) throw new Error("disk full"); // the first user line
      },
    }),
  });
  await assert.rejects(session.send("hello"), DuplexError);
  const status = await session.waitForExit({ timeoutMs: 5000 });
  assert.equal(status.state, "failed");
  assert.match(JSON.stringify(status), /Cannot record the session: disk full/);
});

/** How a failing sink fails: a throw, a rejected promise, a stream whose write rejects. */
type Failing = "throw" | "reject" | "stream";

/** A sink that accepts `accept` lines (kept in `accepted`), then fails with "disk full". */
function failingSink(accept: number, how: Failing): {
  accepted: string[];
  to: RecordOptions["to"];
  entries(): TranscriptEntry[];
} {
  const accepted: string[] = [];
  const take = (line: string): void => {
    if (accepted.length >= accept) throw new Error("disk full");
    accepted.push(line);
  };
  const later = async (line: string): Promise<void> => {
    await sleep(1); // answers in a later macrotask, as a file does
    take(line);
  };
  const decoder = new TextDecoder();
  const to = how === "throw"
    ? take
    : how === "reject"
    ? later
    : new WritableStream<Uint8Array>({ write: (chunk) => later(decoder.decode(chunk)) });
  return { accepted, to, entries: () => parseTranscript(accepted.join("")) };
}

/** The recording's error, `Cannot record the session: disk full`, is the error or in its causes. */
function carriesDiskFull(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (
      e instanceof DuplexError && e.message === "Cannot record the session: disk full" &&
      e.cause instanceof Error && e.cause.message === "disk full"
    ) return true;
  }
  return false;
}

/** Three turns, each settled; then the session is closed. */
async function threeTurns(
  transport: TransportFactory,
): Promise<{ outcomes: ({ text: string } | { error: unknown })[]; status: ExitStatus }> {
  const session = await DuplexSession.start({ transport, closeTimeoutMs: 10_000 });
  const outcomes: ({ text: string } | { error: unknown })[] = [];
  for (const prompt of ["one", "two", "three"]) {
    try {
      outcomes.push({ text: (await session.send(prompt, { timeoutMs: 10_000 })).result.text });
    } catch (error) {
      outcomes.push({ error });
    }
  }
  await session.close();
  return { outcomes, status: session.exitStatus };
}

/**
 * What must hold whenever the sink failed: each turn that returned was
 * recorded (its prompt and its result), none returned after one failed, each
 * failure carries the recording's error, and so does the session's end.
 */
function assertNothingUnrecorded(
  run: Awaited<ReturnType<typeof threeTurns>>,
  entries: readonly TranscriptEntry[],
  sinkFailed: boolean,
): void {
  const prompts = entries.filter((e) => e.dir === "stdin" && e.msg?.type === "user")
    .map((e) => JSON.stringify(e.msg!.message));
  const results = entries.filter((e) => e.dir === "stdout" && e.msg?.type === "result")
    .map((e) => e.msg!.result);
  const failed = run.outcomes.findIndex((o) => "error" in o);
  run.outcomes.forEach((outcome, i) => {
    if ("error" in outcome) {
      assert.ok(carriesDiskFull(outcome.error), `turn ${i + 1}: ${outcome.error}`);
      return;
    }
    assert.ok(failed < 0 || i < failed, `turn ${i + 1} ran after turn ${failed + 1} failed`);
    assert.ok(results.includes(outcome.text), `turn ${i + 1} returned unrecorded output`);
    const prompt = ["one", "two", "three"][i]!;
    assert.ok(
      prompts.some((p) => p.includes(`"text":"${prompt}"`)),
      `turn ${i + 1}'s prompt was not recorded`,
    );
  });
  if (!sinkFailed) return;
  assert.ok(run.status.state !== "running");
  assert.equal(run.status.exit.reason, "Cannot record the session: disk full");
  if (failed < 0) return; // the sink failed on the end of input or the exit, after the turns
  assert.equal(run.status.state, "failed", JSON.stringify(run.status));
  assert.ok(carriesDiskFull(run.status.error), String(run.status.error));
}

Deno.test("record() whose sink fails after N lines: no turn runs unrecorded, and later sends carry the recording's error", async (t) => {
  // Issue 20: record(subprocess(), { to }) with a sink failing after 6 lines, then three turns:
  // a turn ran unrecorded after the failure, and the next send said "its input was ended".
  for (const how of ["throw", "reject"] as const) {
    for (let accept = 0; accept <= 8; accept++) {
      await t.step(
        `fake_claude over subprocess(), a sink that ${how}s after ${accept} lines`,
        async () => {
          const sink = failingSink(accept, how);
          const run = await threeTurns(record(subprocess(fakeOptions()), { to: sink.to }));
          assertNothingUnrecorded(run, sink.entries(), accept < 9); // 9 lines in all
          if (accept === 6) {
            assert.ok(
              "text" in run.outcomes[1]! && "error" in run.outcomes[2]!,
              "the third turn fails",
            );
          }
        },
      );
    }
  }

  const clean = memorySink();
  await threeTurns(record(new ScriptedCli({ echo: true }).transport, { to: clean.to }));
  const total = clean.lines.length;
  assert.ok(total > 9, "the scripted session has lines on both sides");
  for (const how of ["throw", "reject", "stream"] as const) {
    await t.step(`ScriptedCli, a sink that ${how}s, after 0 to ${total - 1} lines`, async () => {
      for (let accept = 0; accept < total; accept++) {
        const sink = failingSink(accept, how);
        const cli = new ScriptedCli({ echo: true });
        const run = await threeTurns(record(cli.transport, { to: sink.to }));
        const entries = sink.entries();
        assertNothingUnrecorded(run, entries, true);
        const recorded = entries.filter((e) => e.dir === "stdin").map((e) => JSON.stringify(e.msg));
        for (const frame of cli.received) {
          assert.ok(
            recorded.includes(JSON.stringify(frame)),
            `after ${accept}: ${frame.type} reached the CLI unrecorded`,
          );
        }
      }
    });
  }
});

Deno.test("record() hands a line on only once the sink has accepted it, both ways", async () => {
  const waiting: PromiseWithResolvers<void>[] = [];
  const lines: string[] = [];
  const to = (line: string): Promise<void> => {
    lines.push(line);
    const accepted = Promise.withResolvers<void>();
    waiting.push(accepted);
    return accepted.promise;
  };
  const acceptAll = async (): Promise<void> => {
    for (const accepted of waiting.splice(0)) accepted.resolve();
    await sleep(5);
  };
  const cli = new ScriptedCli({ echo: true });
  const transport = record(await cli.transport(openContext()), { to });
  const reader = transport.readable.getReader();
  let output = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      output += decoder.decode(value, { stream: true });
    }
  })();
  let written = false;
  const writing = transport.write(userLine("hi")).then(() => void (written = true));
  await sleep(20);
  assert.equal(lines.length, 1, "the spawn entry is still being written");
  assert.deepEqual([cli.received.length, written], [0, false], "nothing sent before its recording");
  await acceptAll();
  assert.equal(lines.length, 2, "the prompt is being written");
  assert.deepEqual([cli.received.length, written], [0, false], "nor while the sink holds it");
  await acceptAll();
  await writing;
  assert.equal(cli.received.length, 1, "sent once recorded");
  await sleep(20);
  assert.equal(lines.length, 3, "the first answer is being written");
  assert.equal(output, "", "and not passed on yet");
  for (let i = 0; i < 200 && !output.includes('"type":"result"'); i++) {
    const before = lines.length;
    await acceptAll();
    const recorded = parseTranscript(lines.slice(0, before).join(""))
      .filter((e) => e.dir === "stdout");
    const passed = output.split("\n").slice(0, -1);
    assert.ok(passed.length <= recorded.length, "no line is passed on before it was recorded");
  }
  assert.match(output, /"type":"result"/);
  const closing = transport.close();
  let closed = false;
  void closing.then(() => closed = true);
  for (let i = 0; i < 400 && !closed; i++) await acceptAll();
  assert.equal((await closing).requested, true);
  await reading;
  assert.match(lines.at(-1)!, /"event":"exit"/);
});

Deno.test("record() whose sink failed: write() rejects with its error, output stops, and the CLI gets nothing more", async (t) => {
  for (const how of ["throw", "reject"] as const) {
    await t.step(`on an input line, a sink that ${how}s`, async () => {
      const sink = failingSink(1, how); // the spawn entry only
      const cli = new ScriptedCli({ echo: true });
      const transport = record(await cli.transport(openContext()), { to: sink.to });
      const reader = new FrameReader(transport);
      let first: unknown;
      await assert.rejects(transport.write(userLine("lost")), (error: unknown) => {
        first = error;
        assert.ok(error instanceof DuplexError && error.kind === "aborted");
        return carriesDiskFull(error);
      });
      await assert.rejects(transport.write(userLine("later")), (error: unknown) => error === first);
      await assert.rejects(reader.next(5000), (error: unknown) => error === first);
      const exit = await transport.closed;
      assert.equal(exit.reason, "Cannot record the session: disk full");
      assert.deepEqual(cli.received, [], "no line reached the CLI");
      assert.equal((await transport.close()).reason, exit.reason);
    });

    await t.step(`on an output line, a sink that ${how}s`, async () => {
      const sink = failingSink(3, how); // spawn, the prompt, its first answer
      const cli = new ScriptedCli({ echo: true });
      const transport = record(await cli.transport(openContext()), { to: sink.to });
      const reader = new FrameReader(transport);
      await transport.write(userLine("hi"));
      let failure: unknown;
      await assert.rejects(reader.until((frame) => frame.type === "result", 5000), (error) => {
        failure = error;
        return carriesDiskFull(error);
      });
      await assert.rejects(
        transport.write(userLine("after")),
        (error: unknown) => error === failure,
      );
      assert.equal(cli.received.length, 1, "only the recorded prompt reached the CLI");
      const out = sink.entries().filter((e) => e.dir === "stdout");
      assert.equal(out.length, 1);
      assert.equal(reader.chunks.length, 0, "the unrecorded answers were not passed on");
      assert.equal((await transport.closed).reason, "Cannot record the session: disk full");
      await transport.close();
    });
  }
});

Deno.test("record() of a factory records one process; replay() refuses what it cannot read", async (t) => {
  await t.step("a second open rejects", async () => {
    const factory = record(new ScriptedCli({ echo: true }).transport, { to: () => {} });
    const first = await factory(openContext());
    await assert.rejects(factory(openContext()), (error: unknown) => {
      assert.ok(error instanceof DuplexError && error.kind === "invalid_argument");
      assert.match(error.message, /call record\(\) again/);
      return true;
    });
    await first.close();
  });

  await t.step("a relative path needs a URL", () => {
    assert.throws(() => replay("fixtures/x.ndjson"), /new URL\("\.\/fixtures\/x\.ndjson"/);
  });

  await t.step("a missing file rejects the open, and verify() says so", async () => {
    const cli = replay("/nonexistent/duplex/session.ndjson");
    await assert.rejects(cli.transport(openContext()), /Cannot replay file:\/\/\/nonexistent/);
    assert.throws(() => cli.verify(), DuplexError);
  });

  await t.step("verify() before the replay was opened", () => {
    assert.throws(() => replay([]).verify(), /never opened/);
  });

  await t.step("a user line written when the end of input was recorded", async () => {
    const cli = replay(parseTranscript(
      ['{"seq":0,"t_ms":0,"dir":"meta","msg":{"event":"stdin_end"}}'].join("\n"),
    ));
    const transport = await cli.transport(openContext());
    await transport.write(userLine("extra"));
    await cli.done;
    assert.match(
      cli.diff ?? "",
      /recorded: transcript entry 1 \(seq 0\)\n {2}written: {2}the session's write #1\n/,
    );
    assert.match(cli.diff ?? "", /expected: end of input\n {2}got: {6}\{"type":"user"/);
    await transport.close();
  });
});

Deno.test("replay() of a URL fetches it when opened, and the open's signal cancels the fetch", async () => {
  const line = '{"seq":0,"t_ms":0,"dir":"meta","msg":{"event":"exit","code":0,"signal":null}}\n';
  const requests: string[] = [];
  const arrived = Promise.withResolvers<void>();
  const release = Promise.withResolvers<Response>();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const { pathname } = new URL(request.url);
    requests.push(pathname);
    if (pathname === "/ok.ndjson") return new Response(line);
    arrived.resolve();
    return release.promise; // answered only once the client has given up
  });
  const base = `http://127.0.0.1:${server.addr.port}`;

  const cli = replay(`${base}/ok.ndjson`);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(requests, [], "nothing is fetched before the transport opens");
  const transport = await cli.transport(openContext());
  assert.deepEqual(requests, ["/ok.ndjson"]);
  assert.equal((await transport.closed).code, 0);
  await cli.done;
  cli.verify();

  const stalled = replay(new URL(`${base}/stalled.ndjson`));
  const controller = new AbortController();
  const reason = new Error("the test gave up");
  const opening = stalled.open({ signal: controller.signal });
  await arrived.promise;
  controller.abort(reason);
  await assert.rejects(opening, (error: unknown) => error === reason);
  release.resolve(new Response(line));
  assert.throws(() => stalled.verify(), (error: unknown) => error === reason);
  await stalled.done;
});

Deno.test("record() of a transport passes the transport conformance suite", async (t) => {
  const sinks: string[][] = [];
  await runTransportConformance(t, async () => {
    const lines: string[] = [];
    sinks.push(lines);
    const inner = await conformanceCli({ chunking: { maxChunk: 7 } }).transport(openContext());
    return { transport: record(inner, { to: (line) => void lines.push(line) }) };
  });
  assert.ok(sinks.length > 5, "each contract opened its own recorded transport");
  const ended = sinks.filter((l) => l.some((line) => line.includes('"event":"exit"')));
  assert.ok(ended.length > 0, "some recordings ran to the exit");
  for (const lines of ended) {
    assert.match(lines.at(-1)!, /"event":"exit"/, "the exit is the last entry");
  }
});
