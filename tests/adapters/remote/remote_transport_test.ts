import assert from "node:assert/strict";
import { remote } from "../../../adapters/remote/mod.ts";
import { type DuplexError, isDuplexError } from "../../../src/errors.ts";
import { LOST_TERMINAL_REASON, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import type { Transport } from "../../../src/transport/transport.ts";
import { connect, FakeRelay, handshake, openRemote, TOKEN, withRelay } from "./_fake_relay.ts";

const PERMISSIONS: Deno.PermissionOptions = { net: ["127.0.0.1"] };

async function readText(
  transport: Transport,
  reader?: ReadableStreamDefaultReader<Uint8Array | string>,
): Promise<string> {
  const r = reader ?? transport.readable.getReader();
  const { value, done } = await r.read();
  if (reader === undefined) r.releaseLock();
  if (done) return "<done>";
  return typeof value === "string" ? value : new TextDecoder().decode(value);
}

Deno.test("remote() checks its options before connecting", () => {
  assert.throws(() => remote({ url: "http://x", token: "t" }), TypeError);
  assert.throws(() => remote({ url: "ws://x", token: "" }), /token/);
  assert.throws(
    () => remote({ url: "ws://x", token: "t", heartbeatMs: -1 }),
    /heartbeatMs must be a number of milliseconds from 1/,
  );
});

Deno.test("remote() authenticates with the bearer subprotocol and sends the spawn request", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const opening = openRemote(relay, { spawn: { model: "sonnet", permissionMode: "plan" } });
    const connection = await relay.accept();
    assert.equal(connection.token, TOKEN);
    const hello = await handshake(connection);
    assert.deepEqual(hello, {
      t: "hello",
      v: 1,
      spawn: { model: "sonnet", permissionMode: "plan" },
    });
    const transport = await opening;
    assert.equal(transport.info.kind, "remote");
    assert.equal(transport.info.freshChunks, true);
    connection.send({
      t: "exit",
      seq: 1,
      exit: { code: 0, signal: null, stderrTail: "", requested: false },
    });
    assert.equal((await transport.closed).code, 0);
  }));

Deno.test("remote() maps the relay's refusals to DuplexError kinds", {
  permissions: PERMISSIONS,
}, async (t) => {
  for (
    const [kind, expected] of [
      ["unauthorized", "unauthorized"],
      ["not_permitted", "not_permitted"],
      ["spawn_failed", "process_exited"],
      ["busy", "closed"],
      ["unknown_session", "not_found"],
      ["resume_gap", "closed"],
    ] as const
  ) {
    await t.step(kind, () =>
      withRelay(async (relay) => {
        // A busy start is tried again while attempts remain (remote_busy_test.ts): none here.
        const opening = openRemote(relay, kind === "busy" ? { reconnect: false } : {});
        const connection = await relay.accept();
        await connection.next("hello");
        connection.send({ t: "error", kind, message: "no" });
        connection.close(1008);
        const error = await opening.then(() => undefined, (e: unknown) => e);
        assert.ok(isDuplexError(error), String(error));
        assert.equal((error as DuplexError).kind, expected);
        assert.match((error as DuplexError).message, new RegExp(`${kind}: no`));
      }));
  }
});

Deno.test("remote() fails clearly when nothing listens, or the server is not a relay", {
  permissions: PERMISSIONS,
}, async (t) => {
  await t.step("nothing listens", async () => {
    const relay = new FakeRelay();
    const url = relay.url;
    await relay.close();
    const error = await remote({ url, token: TOKEN, connectTimeoutMs: 2_000 })({
      signal: new AbortController().signal,
    }).then(() => undefined, (e: unknown) => e);
    assert.ok(isDuplexError(error) && error.kind === "closed", String(error));
  });
  await t.step("a server that picks no subprotocol", async () => {
    const relay = new FakeRelay({ protocol: "" });
    try {
      const error = await openRemote(relay).then(() => undefined, (e: unknown) => e);
      assert.ok(isDuplexError(error), String(error));
      assert.match(
        String((error as Error).message),
        new RegExp(`it chose subprotocol "", not "${SUBPROTOCOL}"`),
      );
    } finally {
      await relay.close();
    }
  });
  await t.step("no answer to hello within connectTimeoutMs", () =>
    withRelay(async (relay) => {
      const opening = openRemote(relay, { connectTimeoutMs: 100 });
      await relay.accept();
      const error = await opening.then(() => undefined, (e: unknown) => e);
      assert.ok(isDuplexError(error) && error.kind === "timeout", String(error));
    }));
});

Deno.test("remote() moves input with sequence numbers and output in order", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const { transport, connection } = await connect(relay);
    const first = transport.write('{"n":1}');
    const second = transport.write('{"n":2}');
    assert.deepEqual(await connection.next("in"), { t: "in", seq: 1, line: '{"n":1}' });
    assert.deepEqual(await connection.next("in"), { t: "in", seq: 2, line: '{"n":2}' });
    // One burst, one frame: a second small frame would wait on Nagle's algorithm.
    assert.deepEqual(
      JSON.parse(connection.frames.at(-1) ?? "").map((m: { seq: number }) => m.seq),
      [
        1,
        2,
      ],
    );
    let settled = false;
    void first.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false, "a write settles when the relay has applied it");
    connection.send({ t: "ack", seq: 2 });
    await Promise.all([first, second]);
    connection.output(1, '{"a":1}\n{"b"');
    connection.output(2, ":2}\n");
    const reader = transport.readable.getReader();
    assert.equal(await readText(transport, reader), '{"a":1}\n{"b"');
    connection.output(1, "replayed, ignored\n"); // a duplicate (seq already seen)
    assert.equal(await readText(transport, reader), ":2}\n");
    assert.deepEqual(await connection.next("ack"), { t: "ack", seq: 2 }, "output acknowledged");
    connection.send({ t: "err", seq: 3, line: "warning: x" });
    const stderr = transport.stderr?.getReader();
    assert.equal((await stderr?.read())?.value, "warning: x");
    stderr?.releaseLock();
    const closing = transport.close();
    await connection.next("close");
    connection.send({
      t: "exit",
      seq: 4,
      exit: { code: 143, signal: null, stderrTail: "warning: x", requested: true },
    });
    const exit = await closing;
    assert.equal(exit.code, 143);
    assert.equal(exit.requested, true);
    assert.equal(await readText(transport, reader), "<done>");
    await assert.rejects(
      transport.write("{}"),
      (e: unknown) => isDuplexError(e) && e.kind === "closed",
    );
  }));

Deno.test("remote() ends the transport on an output gap (never delivers out of order)", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const { transport, connection } = await connect(relay, { reconnect: false });
    const pending = transport.write("{}");
    connection.output(2, "skipped one\n");
    const exit = await transport.closed;
    assert.match(exit.reason ?? "", /output 2 after 0 \(a gap\)/);
    await assert.rejects(pending, (e: unknown) => isDuplexError(e) && e.kind === "process_exited");
    assert.equal(await readText(transport), "<done>");
  }));

Deno.test("remote() resumes after a dropped connection: nothing lost, nothing twice", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const { transport, connection } = await connect(relay);
    const reader = transport.readable.getReader();
    connection.output(1, "one\n");
    assert.equal(await readText(transport, reader), "one\n");
    const first = transport.write("in-1");
    const second = transport.write("in-2");
    await connection.next("in", (m) => m.seq === 2);
    connection.close(4999); // the connection drops (the client sent no close message)
    const resumed = await relay.accept();
    const hello = await resumed.next("hello");
    assert.deepEqual(hello.resume, { session: "s-1", after: 1, applied: 0 });
    // The relay had applied in-1 only; it replays output 1 (seen) and 2 (not seen).
    resumed.send({ t: "ready", session: "s-1", resumed: true, inSeq: 1, graceMs: 1000 });
    await first;
    assert.deepEqual(await resumed.next("in"), { t: "in", seq: 2, line: "in-2" }, "resent");
    resumed.output(1, "one\n");
    resumed.output(2, "two\n");
    resumed.send({ t: "ack", seq: 2 });
    await second;
    assert.equal(await readText(transport, reader), "two\n");
    resumed.send({
      t: "exit",
      seq: 3,
      exit: { code: 0, signal: null, stderrTail: "", requested: false },
    });
    assert.equal(await readText(transport, reader), "<done>");
    assert.equal((await transport.closed).code, 0);
  }));

Deno.test("remote() names in its resume the last line a result answered", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const { transport, connection } = await connect(relay);
    transport.answered?.("u-1");
    transport.answered?.("u-2"); // the session read a later result
    connection.close(4999);
    const resumed = await relay.accept();
    const hello = await resumed.next("hello");
    assert.deepEqual(hello.resume, { session: "s-1", after: 0, applied: 0, answered: "u-2" });
    resumed.send({ t: "ready", session: "s-1", resumed: true, inSeq: 0, graceMs: 1000 });
    resumed.send({
      t: "exit",
      seq: 1,
      exit: { code: 0, signal: null, stderrTail: "", requested: false },
    });
    assert.equal((await transport.closed).code, 0);
  }));

/** A user line as the session writes it. */
function userLine(uuid: string): string {
  return JSON.stringify({
    type: "user",
    session_id: "",
    parent_tool_use_id: null,
    message: { role: "user", content: [{ type: "text", text: uuid }] },
    uuid,
  });
}

/** The user lines a synthetic lost result names, or undefined for other text. */
function lostUuids(text: string): string[] | undefined {
  const line = text.trim();
  if (!line.startsWith("{")) return undefined;
  const frame = JSON.parse(line) as Record<string, unknown>;
  return frame.terminal_reason === LOST_TERMINAL_REASON
    ? frame.user_message_uuids as string[]
    : undefined;
}

/** The fake relay reports the CLI's exit as output `seq`. */
function exitOn(connection: { send(message: unknown): void }, seq: number): void {
  connection.send({
    t: "exit",
    seq,
    exit: { code: 0, signal: null, stderrTail: "", requested: false },
  });
}

Deno.test("remote() ends the turns a CLI that is gone took and never answered, after its output", {
  permissions: PERMISSIONS,
}, async (t) => {
  /* Writes the user lines, has `before` happen, drops the connection, resumes with `gone`. */
  const resumeGone = async (
    relay: FakeRelay,
    uuids: string[],
    gone: { inSeq: number; outSeq: number; uuids?: string[] },
    before?: (
      parts: Awaited<ReturnType<typeof connect>> & { reader: ReadableStreamDefaultReader },
    ) => Promise<void>,
  ) => {
    const connected = await connect(relay);
    const { transport, connection } = connected;
    const reader = transport.readable.getReader();
    for (const uuid of uuids) void transport.write(userLine(uuid)).catch(() => {});
    await connection.next("in", (m) => m.seq === uuids.length);
    await before?.({ ...connected, reader });
    connection.close(4999);
    const resumed = await relay.accept();
    await resumed.next("hello");
    const inSeq = gone.inSeq;
    resumed.send({ t: "ready", session: "s-1", resumed: true, inSeq, graceMs: 1000, gone });
    return { transport, reader, resumed };
  };

  await t.step(
    "lines up to gone.inSeq, once at the resume (a resume from the store)",
    () =>
      withRelay(async (relay) => {
        // The CLI before took in-1 and in-2; the relay writes in-3 to the new one.
        const gone = { inSeq: 2, outSeq: 1 };
        const { transport, reader, resumed } = await resumeGone(
          relay,
          ["u1", "u2", "u3"],
          gone,
          async ({ transport, connection, reader }) => {
            connection.output(1, "one's result\n");
            assert.equal(await readText(transport, reader), "one's result\n");
            transport.answered?.("u1");
          },
        );
        assert.deepEqual(lostUuids(await readText(transport, reader)), ["u2"], "u1 was answered");
        assert.equal((await resumed.next("in")).seq, 3, "in-3 is sent again");
        resumed.output(2, "three's result\n");
        assert.equal(await readText(transport, reader), "three's result\n", "no second lost line");
        // A line never answered (cancelled while queued), then a resume naming the same CLI before.
        void transport.write(userLine("u4")).catch(() => {});
        await resumed.next("in");
        resumed.close(4999);
        const again = await relay.accept();
        await again.next("hello");
        again.send({ t: "ready", session: "s-1", resumed: true, inSeq: 4, graceMs: 1000, gone });
        again.output(3, "later output\n");
        assert.equal(await readText(transport, reader), "later output\n", "nothing settled again");
        exitOn(again, 4);
        assert.equal(await readText(transport, reader), "<done>");
      }),
  );

  await t.step(
    "lines gone.uuids names, taken beyond what the record counted",
    () =>
      withRelay(async (relay) => {
        const { transport, reader, resumed } = await resumeGone(relay, ["u1", "u2"], {
          inSeq: 0,
          outSeq: 0,
          uuids: ["u1", "tool-result-uuid"],
        });
        assert.deepEqual(lostUuids(await readText(transport, reader)), ["u1"]);
        exitOn(resumed, 1);
        assert.equal(await readText(transport, reader), "<done>");
      }),
  );

  await t.step(
    "after the output the CLI before left for the client (a hibernation's tail)",
    () =>
      withRelay(async (relay) => {
        const { transport, reader, resumed } = await resumeGone(relay, ["u1", "u2"], {
          inSeq: 2,
          outSeq: 2,
        });
        resumed.output(1, "partial"); // the old CLI's kept output, its last line cut
        assert.equal(await readText(transport, reader), "partial");
        resumed.output(2, ' {"type":"result","user_message_uuids":["u1"]}\n');
        assert.match(await readText(transport, reader), /u1/);
        const lost = await readText(transport, reader);
        assert.ok(lost.startsWith("\n"), "a newline ends a line the CLI left half-written");
        // Queued after that output: u1's own result comes first (the session then ignores u1).
        assert.deepEqual(lostUuids(lost), ["u1", "u2"]);
        exitOn(resumed, 3);
        assert.equal(await readText(transport, reader), "<done>");
      }),
  );
});

Deno.test("remote() ends with the reason when the relay cannot resume", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const { transport, connection } = await connect(relay);
    connection.close(4999);
    const again = await relay.accept();
    await again.next("hello");
    again.send({ t: "error", kind: "resume_gap", message: "output 2..9 is gone" });
    again.close(4004);
    const exit = await transport.closed;
    assert.match(exit.reason ?? "", /cannot resume the session: resume_gap: output 2..9 is gone/);
  }));

Deno.test("remote() gives up after its reconnection attempts", {
  permissions: PERMISSIONS,
}, async () => {
  const relay = new FakeRelay();
  const { transport } = await connect(relay);
  await relay.close(); // closes the socket and stops listening
  const exit = await transport.closed;
  assert.match(exit.reason ?? "", /could not reconnect after 3 attempt\(s\)/);
});

Deno.test("remote() drops a silent relay after two heartbeats, then resumes", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const { transport, connection } = await connect(relay, { heartbeatMs: 50 });
    assert.deepEqual(Object.keys(await connection.next("ping")), ["t", "at"]);
    // The relay never answers: the client gives up on this socket and resumes on a new one.
    const resumed = await relay.accept();
    assert.deepEqual((await resumed.next("hello")).resume, {
      session: "s-1",
      after: 0,
      applied: 0,
    });
    resumed.send({ t: "ready", session: "s-1", resumed: true, inSeq: 0, graceMs: 1000 });
    resumed.send({ t: "ping", at: 7 });
    assert.deepEqual(await resumed.next("pong"), { t: "pong", at: 7 });
    resumed.send({
      t: "exit",
      seq: 1,
      exit: { code: 0, signal: null, stderrTail: "", requested: false },
    });
    assert.equal((await transport.closed).code, 0);
  }));

Deno.test("remote() close(): a CLI that exited by itself meanwhile is not the close's end", {
  permissions: PERMISSIONS,
}, async (t) => {
  for (
    const [what, requested, expected] of [
      ["the relay's close ended it", true, true],
      ["it exited by itself while the close was on its way", false, false],
      ["the relay does not say", undefined, true],
    ] as const
  ) {
    await t.step(what, () =>
      withRelay(async (relay) => {
        const { transport, connection } = await connect(relay);
        const closing = transport.close();
        await connection.next("close");
        const exit = { code: 1, signal: null, stderrTail: "", requested };
        connection.sendRaw(JSON.stringify({ t: "exit", seq: 1, exit })); // undefined: left out
        const ended = await closing;
        assert.equal(ended.code, 1);
        assert.equal(ended.requested, expected);
      }));
  }
  await t.step(
    "without a close asked for, the end is never the client's",
    () =>
      withRelay(async (relay) => {
        const { transport, connection } = await connect(relay);
        connection.send({
          t: "exit",
          seq: 1,
          exit: { code: 1, signal: null, stderrTail: "", requested: true },
        });
        assert.equal((await transport.closed).requested, false);
      }),
  );
});

Deno.test("remote() close() is bounded when the relay never reports the exit", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const { transport, connection } = await connect(relay, { closeTimeoutMs: 100 });
    const exit = await transport.close();
    assert.equal((await connection.next("close")).t, "close");
    assert.match(exit.reason ?? "", /did not report the exit within 100 ms/);
    assert.equal(exit.requested, true);
    assert.deepEqual(await transport.close(), exit, "idempotent");
  }));
