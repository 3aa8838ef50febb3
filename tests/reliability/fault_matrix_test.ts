/*
 * The fault matrix of the session core: one step per fault. Each step checks
 * what the user sees (a typed error or event with an actionable message), that
 * the session is left consistent (usable, proved by a following turn, or
 * cleanly ended), that every waiting promise settled, and that nothing leaked
 * (Deno's sanitizers, and the listeners on one long-lived AbortSignal).
 *
 * Six steps found real bugs when written (JSON-unencodable content and
 * decisions, a permission timeout that left the handler's signal live, the
 * drain that could not cancel a locked stream, stderr lost at exit); they stay
 * as regression tests.
 */

import assert from "node:assert/strict";
import {
  type DuplexError,
  DuplexSession,
  type DuplexSessionOptions,
  type ExitStatus,
  isDuplexError,
  type PermissionHandler,
  type PermissionRequest,
  type SessionEvent,
  type Transport,
  type TransportExit,
  type TransportFactory,
} from "../../mod.ts";
import {
  assistantTextFrame,
  canUseToolRequest,
  controlSuccess,
  initFrame,
  resultFrame,
  streamTextDeltaFrames,
} from "../../src/testing/frames.ts";
import {
  ScriptedCli,
  type ScriptedCliOptions,
  type ScriptedExit,
} from "../../src/testing/scripted_cli.ts";
import { countListeners, tick, wrap } from "../session/_helpers.ts";

// ---------------------------------------------------------------------------
// Harness

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Waits for a promise to settle, bounded: a promise still pending after `ms` fails the test. */
async function settled<T>(promise: Promise<T>, what: string, ms = 2000): Promise<Outcome<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pending = new Promise<"pending">((resolve) => {
    timer = setTimeout(() => resolve("pending"), ms);
  });
  try {
    const outcome = await Promise.race([
      promise.then(
        (value): Outcome<T> => ({ ok: true, value }),
        (error): Outcome<T> => ({ ok: false, error }),
      ),
      pending,
    ]);
    if (outcome === "pending") assert.fail(`${what} did not settle within ${ms} ms`);
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

/** The value a promise resolves with (bounded); fails if it rejects. */
async function resolved<T>(promise: Promise<T>, what: string, ms = 2000): Promise<T> {
  const outcome = await settled(promise, what, ms);
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** The error a promise rejects with (bounded); fails if it resolves. */
async function rejected(promise: Promise<unknown>, what: string, ms = 2000): Promise<unknown> {
  const outcome = await settled(promise, what, ms);
  assert.ok(!outcome.ok, `${what} resolved; a rejection was expected`);
  return outcome.error;
}

function assertKind(error: unknown, kind: DuplexError["kind"], message?: RegExp): DuplexError {
  assert.ok(isDuplexError(error, kind), `expected a DuplexError "${kind}", got ${String(error)}`);
  if (message) assert.match(error.message, message);
  assert.match(error.message, /^[A-Z]/, "messages are capitalised");
  assert.doesNotMatch(error.message, /\.$/, "messages have no trailing period");
  return error;
}

function diagnostics(events: readonly SessionEvent[]): string[] {
  return events.flatMap((e) => e.type === "diagnostic" ? [e.kind] : []);
}

/**
 * A session over a ScriptedCli, with a subscriber that records every event, a
 * long-lived AbortSignal (passed to every wait, its listeners counted), a
 * tracked `waitForExit`, and `end()`, which closes the session and checks
 * that everything settled and nothing leaked.
 */
class Rig implements AsyncDisposable {
  readonly life = new AbortController();
  readonly listeners = countListeners(this.life.signal);
  readonly events: SessionEvent[] = [];
  readonly cli: ScriptedCli;
  readonly session: DuplexSession;
  readonly exited: Promise<Outcome<ExitStatus>>;
  readonly #tracked: Promise<unknown>[] = [];
  readonly #collector: Promise<void>;
  #ended: Promise<ExitStatus> | undefined;

  constructor(cli: ScriptedCli, session: DuplexSession) {
    this.cli = cli;
    this.session = session;
    const sub = session.subscribe({ capacity: 100_000, signal: this.life.signal });
    this.#collector = (async () => {
      for await (const event of sub) this.events.push(event);
    })();
    this.exited = this.track("waitForExit", session.waitForExit({ signal: this.life.signal }));
  }

  static async start(
    cliOptions: ScriptedCliOptions = { echo: true },
    sessionOptions: Omit<DuplexSessionOptions, "transport"> = {},
    transport?: (cli: ScriptedCli) => TransportFactory,
  ): Promise<Rig> {
    const cli = new ScriptedCli(cliOptions);
    const session = await DuplexSession.start({
      transport: transport ? transport(cli) : cli.transport,
      ...sessionOptions,
    });
    return new Rig(cli, session);
  }

  /** Records a promise that must settle by the end of the test; returns its outcome. */
  track<T>(what: string, promise: Promise<T>, ms = 3000): Promise<Outcome<T>> {
    const outcome = settled(promise, what, ms);
    this.#tracked.push(outcome);
    return outcome;
  }

  /** Sends a turn with the long-lived signal, tracked. */
  send(text: string, timeoutMs?: number): Promise<Outcome<unknown>> {
    return this.track(
      `send(${JSON.stringify(text)})`,
      this.session.send(text, {
        signal: this.life.signal,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      }),
    );
  }

  /** Waits until the recorder saw an event that matches. */
  async seen(match: (e: SessionEvent) => boolean, what: string): Promise<SessionEvent> {
    for (let waited = 0; waited < 2000; waited += 2) {
      const event = this.events.find(match);
      if (event) return event;
      await tick(2);
    }
    return assert.fail(`no event: ${what}; saw ${this.events.map((e) => e.type)}`);
  }

  /** Proves the session usable: a full echo turn and an interrupt round trip. */
  async assertUsable(): Promise<void> {
    const { session, life } = this;
    assert.equal(session.alive, true, "the session is alive");
    assert.equal(session.busy, false, "no turn is left running");
    const turn = await resolved(
      session.send("still there?", { signal: life.signal }),
      "the follow-up turn",
    );
    assert.equal(turn.result.text, "Echo: still there?");
    assert.equal(turn.result.isError, false);
    const receipt = await resolved(session.interrupt({ signal: life.signal }), "interrupt()");
    assert.deepEqual(receipt.stillQueued, []);
  }

  /** Closes the session and checks that everything settled and nothing leaked. Idempotent. */
  end(): Promise<ExitStatus> {
    return this.#ended ??= this.#end();
  }

  async #end(): Promise<ExitStatus> {
    const status = await resolved(this.session.close(), "close()", 3000);
    assert.notEqual(status.state, "running");
    assert.equal(this.session.alive, false);
    await resolved(this.#collector, "the recording subscriber's loop");
    await Promise.all(this.#tracked);
    const exit = await this.exited;
    assert.ok(exit.ok, "waitForExit() resolved");
    assert.deepEqual(exit.value, status, "waitForExit() and close() agree");
    assert.equal(this.listeners(), 0, "no listener is left on the long-lived signal");
    assert.equal(this.session.busy, false, "no turn is left running");
    assert.deepEqual(this.session.pendingPermissions, [], "no permission request is left");
    assert.equal(this.events.filter((e) => e.type === "exit").length, 1, "one exit event");
    assert.equal(this.events.at(-1)?.type, "exit", "the exit event comes last");
    return status;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.end();
  }
}

/** Answers the next user line with what `reply` returns (raw output may be emitted first). */
function onNextUser(
  cli: ScriptedCli,
  reply: (uuid: string, cli: ScriptedCli) => unknown[] | void | Promise<unknown[] | void>,
): void {
  cli.on("user", (frame, cli) => reply(String(frame.uuid), cli), { once: true });
}

/**
 * A transport over the CLI whose `close()` makes the CLI crash on its way out:
 * an end the close caused, so `requested`, as a real transport reports it.
 */
function crashingOnClose(exit: ScriptedExit): (cli: ScriptedCli) => TransportFactory {
  return (cli) => async (context) => {
    const inner = await cli.transport(context);
    const closed = inner.closed.then((ended) => ({ ...ended, requested: true }));
    return wrap(inner, {
      closed,
      close: () => {
        cli.exit(exit);
        return inner.close().then(() => closed);
      },
    });
  };
}

/**
 * A transport whose stdout never ends (a child process still holds the pipe)
 * while the process itself exits. The test controls both.
 */
function heldStdout(): {
  transport: Transport;
  push(text: string): void;
  exit(exit: TransportExit): void;
  release(): void;
  cancelled(): boolean;
} {
  let out!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  let cancelled = false;
  const readable = new ReadableStream<Uint8Array>({
    start: (controller) => {
      out = controller;
    },
    cancel: () => {
      cancelled = true;
      open = false;
    },
  });
  const closed = Promise.withResolvers<TransportExit>();
  const transport: Transport = {
    readable,
    info: { kind: "test", description: "stdout held open by a child" },
    closed: closed.promise,
    write: () => Promise.resolve(),
    endInput: () => Promise.resolve(),
    close: () => closed.promise,
    [Symbol.asyncDispose]: async () => {
      await closed.promise;
    },
  };
  return {
    transport,
    push: (text) => out.enqueue(new TextEncoder().encode(text)),
    exit: (exit) => closed.resolve(exit),
    release: () => {
      if (open) out.close();
      open = false;
    },
    cancelled: () => cancelled,
  };
}

const EXIT_1: TransportExit = { code: 1, signal: null, stderrTail: "", requested: false };

// ---------------------------------------------------------------------------
// CLI crashes

Deno.test("fault: CLI crash", async (t) => {
  await t.step("before any turn", async () => {
    await using rig = await Rig.start({ echo: false });
    const { cli, session } = rig;
    cli.emitStderr("error: unknown option '--bogus'");
    cli.exit({ code: 1 });
    const exit = await rig.exited;
    assert.ok(exit.ok && exit.value.state === "failed");
    assert.equal(exit.value.code, 1);
    assert.match(exit.value.exit.stderrTail, /unknown option/);
    assert.equal(session.alive, false);
    assert.equal(session.state, "failed");
    const sendError = await rejected(session.send("hello"), "send() after the crash");
    assertKind(sendError, "process_exited", /exit code 1.*unknown option.*start a new session/);
    assertKind(
      await rejected(session.request("get_settings"), "request() after the crash"),
      "process_exited",
    );
    assertKind(await rejected(session.interrupt(), "interrupt()"), "process_exited");
    assert.equal(await session.respondToPermission("nope", { behavior: "allow" }), false);
    assert.deepEqual(
      (await Array.fromAsync(session.subscribe())).map((e) => e.type),
      ["exit"],
      "a late subscriber learns the end",
    );
    assert.deepEqual(await rig.end(), exit.value, "close() after the crash reports the status");
    assert.deepEqual(rig.events.map((e) => e.type), ["stderr", "exit"]);
  });

  await t.step("mid-stream (after some stream_event frames)", async () => {
    await using rig = await Rig.start({ echo: false });
    const { cli, session } = rig;
    const turn = rig.send("stream something long");
    await cli.nextWrite("user");
    const partial = streamTextDeltaFrames("A reply that never ends", { chunkSize: 4 }).slice(0, 4);
    cli.emit(initFrame(), ...partial);
    cli.emitStderr("Segmentation fault");
    cli.exit({ code: null, signal: "SIGSEGV" });
    const outcome = await turn;
    assert.ok(!outcome.ok);
    const error = assertKind(outcome.error, "process_exited", /signal SIGSEGV.*Segmentation/);
    assert.equal(error.exit?.signal, "SIGSEGV");
    assert.equal(session.busy, false);
    const status = await rig.end();
    assert.equal(status.state, "failed");
    const streamed = rig.events.filter((e) => e.type === "stream_event");
    assert.deepEqual(
      streamed.map((e) => e.type === "stream_event" && e.uuid),
      partial.map((f) => f.uuid),
      "every frame written before the crash reached subscribers, in order",
    );
  });

  await t.step("while a permission request is pending", async () => {
    const requests: PermissionRequest[] = [];
    const handler: PermissionHandler = (request) => {
      requests.push(request);
      if (request.requestId === "deferred") return { behavior: "defer" };
      // A handler still thinking (asking a person) until its signal aborts.
      return new Promise((_, reject) => {
        request.signal.addEventListener("abort", () => reject(request.signal.reason), {
          once: true,
        });
      });
    };
    await using rig = await Rig.start({ echo: false }, { onPermission: handler });
    const { cli, session } = rig;
    const turn = rig.send("run two tools");
    await cli.nextWrite("user");
    cli.emit(
      canUseToolRequest({ requestId: "deferred", toolName: "Bash", input: { command: "ls" } }),
      canUseToolRequest({ requestId: "thinking", toolName: "Write", input: { file_path: "x" } }),
    );
    await rig.seen(
      (e) => e.type === "permission_request" && e.request.requestId === "thinking",
      "the second permission request",
    );
    assert.equal(session.pendingPermissions.length, 2);
    cli.emitStderr("FATAL: heap out of memory");
    cli.exit({ code: 134 });
    const outcome = await turn;
    assert.ok(!outcome.ok);
    assertKind(outcome.error, "process_exited", /exit code 134/);
    for (const request of requests) {
      assert.equal(request.signal.aborted, true, `${request.requestId}: its signal aborted`);
      assertKind(request.signal.reason, "aborted", /session ended/);
    }
    assert.equal(await session.respondToPermission("deferred", { behavior: "allow" }), false);
    assert.deepEqual(session.pendingPermissions, []);
    await rig.end();
    const resolvedEvents = rig.events.filter((e) => e.type === "permission_resolved");
    assert.deepEqual(
      resolvedEvents.map((e) =>
        e.type === "permission_resolved" && [e.requestId, e.behavior, e.source]
      ),
      [["deferred", "cancelled", "session"], ["thinking", "cancelled", "session"]],
    );
    const answers = cli.received.filter((f) => f.type === "control_response");
    assert.deepEqual(answers, [], "a request withdrawn by the crash is never answered");
  });

  await t.step("while a control request of ours is pending", async () => {
    await using rig = await Rig.start({ echo: false });
    const { cli, session } = rig;
    const settings = rig.track(
      "request(get_settings)",
      session.request("get_settings", {}, { signal: rig.life.signal }),
    );
    const interrupt = rig.track("interrupt()", session.interrupt({ signal: rig.life.signal }));
    await cli.nextWrite("control_request:get_settings");
    await cli.nextWrite("control_request:interrupt");
    cli.emitStderr("panic: lost the plot");
    cli.exit({ code: 2 });
    for (const pending of [settings, interrupt]) {
      const outcome = await pending;
      assert.ok(!outcome.ok);
      const error = assertKind(outcome.error, "process_exited", /exit code 2.*panic: lost/);
      assert.equal(error.exit?.code, 2);
      assert.match(error.exit?.stderrTail ?? "", /panic: lost the plot/);
    }
    assert.equal((await rig.end()).state, "failed");
  });

  await t.step("during close (the CLI crashes on its way out)", async () => {
    await using rig = await Rig.start(
      { echo: false },
      {},
      crashingOnClose({ code: 134, stderrTail: "Aborted (core dumped)" }),
    );
    const turn = rig.send("pending while closing");
    await rig.cli.nextWrite("user");
    const status = await rig.end();
    assert.equal(status.state, "completed", "a close the caller asked for is not a failure");
    assert.equal(status.state === "completed" && status.code, 134);
    assert.ok(status.state === "completed" && /core dumped/.test(status.exit.stderrTail));
    const outcome = await turn;
    assert.ok(!outcome.ok);
    assertKind(outcome.error, "closed", /session was closed/);
  });

  await t.step("during close (the transport never finishes closing)", async () => {
    let inner: Transport | undefined;
    await using rig = await Rig.start(
      { echo: false },
      { closeTimeoutMs: 40 },
      (cli) => async (c) => {
        inner = await cli.transport(c);
        return wrap(inner, { close: () => new Promise<TransportExit>(() => {}) });
      },
    );
    const turn = rig.send("pending while closing");
    await rig.cli.nextWrite("user");
    const status = await rig.end();
    assert.equal(status.state, "completed");
    assert.match(
      status.state === "completed" ? status.exit.reason ?? "" : "",
      /did not close within 40 ms/,
    );
    assert.ok(!(await turn).ok);
    await inner?.close(); // end the stuck fake process
  });
});

// ---------------------------------------------------------------------------
// CLI hangs

Deno.test("fault: CLI hang", async (t) => {
  await t.step("no output after a user line (send timeout, interrupt, escalation)", async () => {
    await using rig = await Rig.start({ echo: false }, {
      interruptGraceMs: 30,
      onPermission: () => ({ behavior: "defer" }),
    });
    const { cli, session } = rig;
    cli.hang(); // from now on it answers nothing (what it already wrote still arrives)
    const turn = rig.send("anyone there?", 20);
    await cli.nextWrite("user");
    cli.emit(canUseToolRequest({ requestId: "perm", toolName: "Bash", input: {} }));
    const asked = await rig.seen((e) => e.type === "permission_request", "the permission request");
    const outcome = await turn;
    assert.ok(!outcome.ok);
    assertKind(outcome.error, "timeout", /no result within 20 ms; the turn was interrupted/);
    const exit = await rig.exited;
    assert.ok(exit.ok && exit.value.state === "completed", "the session closed itself");
    assert.equal(exit.value.signal, "SIGTERM", "the hung CLI had to be signalled");
    assert.equal(session.alive, false);
    assert.ok(asked.type === "permission_request" && asked.request.signal.aborted);
    assert.equal(await session.respondToPermission("perm", { behavior: "allow" }), false);
    await rig.end();
    assert.deepEqual(diagnostics(rig.events), ["turn_interrupted", "cli_unresponsive"]);
    const unresponsive = rig.events.find((e) =>
      e.type === "diagnostic" && e.kind === "cli_unresponsive"
    );
    assert.match(
      unresponsive?.type === "diagnostic" ? unresponsive.message : "",
      /did not acknowledge an interrupt within 30 ms; closing the session/,
    );
    assert.ok(
      cli.received.some((f) => (f.request as { subtype?: string })?.subtype === "interrupt"),
    );
    assert.equal(cli.closeCalls, 1);
  });

  await t.step("never answers a control request", async () => {
    await using rig = await Rig.start({ echo: true }, { controlTimeoutMs: 30 });
    const { cli, session } = rig;
    cli.on("control_request:get_settings", () => {}); // swallowed: no answer, ever
    const error = assertKind(
      await rejected(
        session.request("get_settings", {}, { signal: rig.life.signal }),
        "request(get_settings)",
      ),
      "timeout",
      /Cannot complete get_settings: the CLI did not answer within 30 ms/,
    );
    assert.equal(error.subtype, "get_settings");
    const sent = await cli.nextWrite("control_request:get_settings");
    const cancel = await cli.nextWrite("control_cancel_request");
    assert.equal(cancel.request_id, sent.request_id, "the request was withdrawn");
    assert.equal(error.requestId, sent.request_id);
    await rig.assertUsable();
  });
});

// ---------------------------------------------------------------------------
// Garbage from the CLI

/** Runs one turn whose output is `emit`'s garbage then a result; checks it and the next turn. */
async function garbageTurn(
  rig: Rig,
  emit: (cli: ScriptedCli, uuid: string) => void,
): Promise<SessionEvent[]> {
  onNextUser(rig.cli, (uuid, cli) => {
    cli.emit(initFrame());
    emit(cli, uuid);
    return [assistantTextFrame("fine"), resultFrame({ text: "fine", userMessageUuid: uuid })];
  });
  const turn = await resolved(
    rig.session.send("go", { signal: rig.life.signal }),
    "the turn with garbage",
  );
  assert.equal(turn.result.text, "fine", "the turn still completes");
  await rig.assertUsable();
  return [...turn.events];
}

Deno.test("fault: garbage from the CLI", async (t) => {
  await t.step("non-JSON lines", async () => {
    await using rig = await Rig.start();
    const events = await garbageTurn(rig, (cli) => {
      cli.emitRaw("Warning: something odd\n");
      cli.emitRaw("\u001b[31mcolour codes\u001b[0m\n");
    });
    assert.deepEqual(diagnostics(events), ["noise", "noise"]);
    const first = events.find((e) => e.type === "diagnostic");
    assert.ok(first?.type === "diagnostic");
    assert.equal(first.excerpt, "Warning: something odd");
    assert.match(first.message, /Skipped a line of 22 bytes: it does not start with "\{"/);
  });

  await t.step("truncated JSON", async () => {
    await using rig = await Rig.start();
    const events = await garbageTurn(rig, (cli) => {
      cli.emitRaw('{"type":"assistant","message":{"role":"assis\n');
    });
    assert.deepEqual(diagnostics(events), ["invalid_json"]);
    const diagnostic = events.find((e) => e.type === "diagnostic");
    assert.ok(diagnostic?.type === "diagnostic");
    assert.match(diagnostic.message, /not valid JSON/);
    assert.match(diagnostic.excerpt ?? "", /^\{"type":"assistant"/);
  });

  await t.step("invalid UTF-8 bytes inside a JSON string", async () => {
    await using rig = await Rig.start({ echo: true, chunking: "bytes" });
    const encoder = new TextEncoder();
    const head = encoder.encode(
      '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"a',
    );
    const tail = encoder.encode('b"}]}}\n');
    const line = new Uint8Array([...head, 0xff, 0xfe, ...tail]);
    const events = await garbageTurn(rig, (cli) => cli.emitRaw(line));
    assert.deepEqual(diagnostics(events), ["invalid_utf8"]);
    const repaired = events.find((e) => e.type === "assistant");
    assert.ok(repaired?.type === "assistant");
    assert.deepEqual(repaired.message.content, [{ type: "text", text: "a\uFFFD\uFFFDb" }]);
  });

  await t.step("a JSON array, number, string or null instead of an object", async () => {
    await using rig = await Rig.start();
    const events = await garbageTurn(rig, (cli) => {
      cli.emitRaw('[{"type":"assistant"}]\n42\n"result"\nnull\n');
    });
    // The decoder reports these as "noise" (they do not start with "{").
    assert.deepEqual(diagnostics(events), ["noise", "noise", "noise", "noise"]);
    assert.deepEqual(
      events.flatMap((e) => e.type === "diagnostic" ? [e.excerpt] : []),
      ['[{"type":"assistant"}]', "42", '"result"', "null"],
    );
  });

  await t.step("unknown type, and a known type missing its fields", async () => {
    await using rig = await Rig.start();
    const events = await garbageTurn(rig, (cli) => {
      cli.emit({ type: "hologram", beam: 1 }, { type: "assistant" }, { no_type: true });
    });
    const unknown = events.flatMap((e) => e.type === "unknown" ? [[e.frameType, e.frame]] : []);
    assert.deepEqual(unknown, [
      ["hologram", { type: "hologram", beam: 1 }],
      ["assistant", { type: "assistant" }],
      ["", { no_type: true }],
    ]);
  });

  await t.step("a result with missing or mistyped fields still ends the turn", async () => {
    await using rig = await Rig.start();
    const { session } = rig;
    for (
      const frame of [
        { type: "result" },
        {
          type: "result",
          result: 5,
          is_error: "no",
          total_cost_usd: "lots",
          num_turns: null,
          errors: "boom",
          permission_denials: {},
          usage: [],
          session_id: 7,
          user_message_uuids: "not-an-array",
        },
      ]
    ) {
      onNextUser(rig.cli, () => [frame]);
      const turn = await resolved(session.send("go", { signal: rig.life.signal }), "the turn");
      const r = turn.result;
      assert.equal(r.text, "");
      assert.equal(r.subtype, "unknown");
      assert.equal(r.isError, true, "no subtype and no is_error: not a success");
      assert.equal(r.costUsd, 0);
      assert.equal(r.totalCostUsd, 0);
      assert.equal(r.numTurns, 0);
      assert.equal(r.durationMs, 0);
      assert.equal(r.usage, undefined);
      assert.equal(r.terminalReason, undefined);
      assert.equal(r.stopReason, null);
      assert.deepEqual(r.errors, []);
      assert.deepEqual(r.permissionDenials, []);
      assert.equal(r.apiErrorStatus, null);
      assert.equal(r.sessionId, undefined);
      assert.equal(r.raw, turn.events.at(-1), "the raw frame is the last event of the turn");
    }
    await rig.assertUsable();
  });

  await t.step("a control_response for an unknown id", async () => {
    await using rig = await Rig.start();
    const events = await garbageTurn(rig, (cli) => {
      cli.emit(controlSuccess("nobody-asked", { x: 1 }));
    });
    assert.deepEqual(diagnostics(events), ["stray_control_response"]);
    const stray = events.find((e) => e.type === "diagnostic");
    assert.match(stray?.type === "diagnostic" ? stray.message : "", /nobody-asked/);
  });

  await t.step("a second response for the same id", async () => {
    await using rig = await Rig.start();
    const { cli, session } = rig;
    cli.on("control_request:get_settings", (frame) => [
      controlSuccess(String(frame.request_id), { first: true }),
      controlSuccess(String(frame.request_id), { second: true }),
    ]);
    const reply = await resolved(
      session.request("get_settings", {}, { signal: rig.life.signal }),
      "request(get_settings)",
    );
    assert.deepEqual(reply, { first: true }, "the first answer wins");
    const stray = await rig.seen(
      (e) => e.type === "diagnostic" && e.kind === "stray_control_response",
      "the second answer reported",
    );
    assert.match(stray.type === "diagnostic" ? stray.message : "", /no request of ours waits/);
    await rig.assertUsable();
  });

  await t.step("an over-long line in the middle of a turn", async () => {
    await using rig = await Rig.start({ echo: true, chunking: { maxChunk: 97 } }, {
      maxLineBytes: 1024,
    });
    let long = 0;
    const events = await garbageTurn(rig, (cli) => {
      const frame = assistantTextFrame("x".repeat(5000));
      long = new TextEncoder().encode(JSON.stringify(frame)).length;
      cli.emit(assistantTextFrame("before"), frame, assistantTextFrame("after"));
    });
    assert.deepEqual(diagnostics(events), ["line_too_long"]);
    const skipped = events.find((e) => e.type === "diagnostic");
    assert.ok(skipped?.type === "diagnostic");
    assert.equal(skipped.bytes, long);
    assert.match(skipped.message, /over the 1024-byte limit/);
    const texts = events.flatMap((e) =>
      e.type === "assistant" ? e.message.content.map((b) => (b as { text: string }).text) : []
    );
    assert.deepEqual(texts, ["before", "after", "fine"], "the lines around it are intact");
  });

  await t.step("a control_request with no request_id or no subtype", async () => {
    await using rig = await Rig.start();
    const events = await garbageTurn(rig, (cli) => {
      cli.emit(
        { type: "control_request", request: { subtype: "can_use_tool", tool_name: "Bash" } },
        { type: "control_request", request_id: "no-subtype", request: {} },
        { type: "control_request", request_id: 7, request: "junk" },
      );
    });
    const unknown = events.flatMap((e) => e.type === "unknown" ? [e.frameType] : []);
    assert.deepEqual(unknown, ["control_request", "control_request", "control_request"]);
    assert.equal(
      events.filter((e) => e.type === "permission_request").length,
      0,
      "no permission request is made of a malformed frame",
    );
  });

  await t.step("a can_use_tool with missing tool_name and input", async () => {
    const seen: PermissionRequest[] = [];
    await using rig = await Rig.start({ echo: true }, {
      onPermission: (request) => {
        seen.push(request);
        return { behavior: "allow" };
      },
    });
    const events = await garbageTurn(rig, (cli) => {
      cli.emit({
        type: "control_request",
        request_id: "bare",
        request: { subtype: "can_use_tool" },
      });
    });
    assert.equal(seen.length, 1, "the handler was called");
    assert.equal(seen[0]?.toolName, "");
    assert.deepEqual(seen[0]?.input, {});
    assert.equal(seen[0]?.toolUseId, undefined);
    const answer = await rig.cli.nextWrite(
      (f) =>
        f.type === "control_response" &&
        (f.response as { request_id?: string }).request_id === "bare",
    );
    assert.deepEqual(answer.response, {
      subtype: "success",
      request_id: "bare",
      response: { behavior: "allow", updatedInput: {} },
    });
    assert.deepEqual(
      events.flatMap((e) => e.type === "permission_resolved" ? [[e.toolName, e.behavior]] : []),
      [["", "allow"]],
    );
  });

  await t.step("10k frames in one chunk", async () => {
    await using rig = await Rig.start();
    const { session } = rig;
    const fast = session.subscribe({ capacity: 20_000, signal: rig.life.signal });
    const small = session.subscribe({ signal: rig.life.signal }); // capacity 256, drop-oldest
    const N = 10_000;
    let uuid = "";
    onNextUser(rig.cli, (id, cli) => {
      uuid = id;
      const lines: string[] = [];
      for (let i = 0; i < N; i++) {
        lines.push(JSON.stringify({
          type: "stream_event",
          event: {
            type: "content_block_delta",
            index: 0,
            delta: { type: "text_delta", text: "." },
          },
          seq: i,
        }));
      }
      lines.push(JSON.stringify(resultFrame({ text: "done", userMessageUuid: id })));
      cli.emitRaw(lines.join("\n") + "\n");
    });
    const started = performance.now();
    const turn = await resolved(
      session.send("flood", { signal: rig.life.signal, collectEvents: "all" }),
      "the flood",
    );
    const elapsed = performance.now() - started;
    assert.equal(turn.result.text, "done");
    assert.equal(turn.events.length, N + 1);
    assert.ok(elapsed < 2000, `10k frames took ${elapsed} ms`);
    const seqs: number[] = [];
    for (let i = 0; i <= N; i++) {
      const next = await fast.next();
      assert.ok(!next.done);
      if (next.value.type === "stream_event") {
        seqs.push((next.value as unknown as { seq: number }).seq);
      }
    }
    assert.deepEqual(seqs, Array.from({ length: N }, (_, i) => i), "all delivered, in order");
    assert.equal(small.size, small.capacity, "the small subscriber stayed bounded");
    assert.equal(small.dropped, N + 1 - small.capacity);
    const lagged = await small.next();
    assert.deepEqual(lagged.value, { type: "lagged", count: small.dropped });
    fast.unsubscribe();
    small.unsubscribe();
    assert.ok(uuid);
    await rig.assertUsable();
  });
});

// ---------------------------------------------------------------------------
// Host-side faults

/** Runs a permission request through `handler` and returns the answer the CLI got. */
async function permissionAnswer(
  rig: Rig,
  requestId = "perm-1",
): Promise<Record<string, unknown>> {
  rig.cli.emit(canUseToolRequest({
    requestId,
    toolName: "Bash",
    input: { command: "ls" },
    toolUseId: "toolu_1",
  }));
  const frame = await rig.cli.nextWrite(
    (f) =>
      f.type === "control_response" &&
      (f.response as { request_id?: string }).request_id === requestId,
    { timeoutMs: 2000 },
  );
  return (frame.response as { response: Record<string, unknown> }).response;
}

Deno.test("fault: host side", async (t) => {
  const failing: [string, PermissionHandler, RegExp][] = [
    ["a permission handler that throws", () => {
      throw new Error("kaboom");
    }, /Denied: the permission handler failed \(kaboom\)/],
    [
      "a permission handler that rejects",
      () => Promise.reject(new Error("async kaboom")),
      /Denied: the permission handler failed \(async kaboom\)/,
    ],
  ];
  for (const [name, handler, message] of failing) {
    await t.step(name, async () => {
      await using rig = await Rig.start({ echo: true }, { onPermission: handler });
      const answer = await permissionAnswer(rig);
      assert.equal(answer.behavior, "deny");
      assert.match(String(answer.message), message);
      const diagnostic = await rig.seen((e) => e.type === "diagnostic", "a diagnostic");
      assert.ok(diagnostic.type === "diagnostic" && diagnostic.kind === "permission_handler_error");
      assert.match(diagnostic.message, /^Permission handler failed: /);
      await rig.seen(
        (e) => e.type === "permission_resolved" && e.behavior === "deny" && e.source === "handler",
        "permission_resolved",
      );
      await rig.assertUsable();
    });
  }

  await t.step("a permission handler that hangs past permissionTimeoutMs", async () => {
    const late = Promise.withResolvers<{ behavior: "allow" }>();
    await using rig = await Rig.start({ echo: true }, {
      permissionTimeoutMs: 30,
      onPermission: () => late.promise,
    });
    const answer = await permissionAnswer(rig);
    assert.equal(answer.behavior, "deny");
    assert.match(String(answer.message), /No permission decision was made within 30 ms/);
    await rig.seen(
      (e) => e.type === "permission_resolved" && e.behavior === "deny" && e.source === "timeout",
      "permission_resolved by timeout",
    );
    assert.equal(await rig.session.respondToPermission("perm-1", { behavior: "allow" }), false);
    late.resolve({ behavior: "allow" }); // the late decision is ignored
    await tick(5);
    assert.equal(rig.cli.received.filter((f) => f.type === "control_response").length, 1);
    await rig.assertUsable();
  });

  await t.step({
    name: "a permission handler that hangs past permissionTimeoutMs: its signal aborts",
    fn: async () => {
      let signal: AbortSignal | undefined;
      await using rig = await Rig.start({ echo: true }, {
        permissionTimeoutMs: 30,
        onPermission: (request) => {
          signal = request.signal;
          return new Promise((_, reject) => {
            request.signal.addEventListener("abort", () => reject(request.signal.reason), {
              once: true,
            });
          });
        },
      });
      await permissionAnswer(rig);
      assert.equal(signal?.aborted, true, "the timed-out handler's signal is aborted");
    },
  });

  await t.step("a permission handler that returns a malformed decision", async (t) => {
    const cases: [string, unknown, RegExp][] = [
      ["a string", "yes", /expected a decision object, got "yes"/],
      ["undefined", undefined, /expected a decision object, got undefined/],
      ["an unknown behavior", { behavior: "maybe" }, /behavior must be "allow", "deny" or "defer"/],
      ["a bad updatedInput", { behavior: "allow", updatedInput: [1] }, /updatedInput/],
      ["a bad deny message", { behavior: "deny", message: 5 }, /deny.message must be a string/],
    ];
    for (const [name, decision, reason] of cases) {
      await t.step(name, async () => {
        await using rig = await Rig.start({ echo: true }, {
          onPermission: () => decision as { behavior: "defer" },
        });
        const answer = await permissionAnswer(rig);
        assert.equal(answer.behavior, "deny");
        assert.match(String(answer.message), /invalid decision/);
        assert.match(String(answer.message), reason);
        await rig.seen(
          (e) => e.type === "diagnostic" && e.kind === "permission_handler_error",
          "the handler error reported",
        );
        await rig.assertUsable();
      });
    }
  });

  await t.step({
    name: "a permission handler whose decision cannot be encoded as JSON",
    fn: async () => {
      await using rig = await Rig.start({ echo: true }, {
        // deno-lint-ignore no-explicit-any
        onPermission: () => ({ behavior: "allow", updatedInput: { n: 1n } }) as any,
      });
      const answer = await permissionAnswer(rig);
      assert.equal(answer.behavior, "deny");
      await rig.assertUsable();
    },
  });

  await t.step("a subscriber that never reads", async () => {
    await using rig = await Rig.start();
    const { session } = rig;
    const stuck = session.subscribe({ capacity: 4, signal: rig.life.signal });
    const dropped: number[] = [];
    for (let i = 0; i < 3; i++) {
      await rig.assertUsable();
      dropped.push(stuck.dropped);
      assert.equal(stuck.size, 4, "it holds at most its capacity");
    }
    assert.ok(dropped[0]! > 0 && dropped[1]! > dropped[0]! && dropped[2]! > dropped[1]!);
    const turnEvents = rig.events.filter((e) => e.type === "result").length;
    assert.equal(turnEvents, 3, "the other subscriber missed nothing");
    assert.deepEqual(await stuck.next(), {
      done: false,
      value: { type: "lagged", count: stuck.dropped },
    });
    stuck.unsubscribe();
  });

  await t.step("a subscriber that throws inside its for-await loop", async () => {
    await using rig = await Rig.start();
    const { session } = rig;
    const sub = session.subscribe({ signal: rig.life.signal });
    const consumer = (async () => {
      for await (const event of sub) {
        if (event.type === "assistant") throw new Error("subscriber bug");
      }
    })();
    const turn = rig.send("trigger");
    assert.match(
      String(await rejected(consumer, "the failing consumer")),
      /subscriber bug/,
    );
    assert.ok((await turn).ok, "the turn is unaffected");
    assert.equal(sub.ended, true, "leaving the loop by a throw unsubscribed it");
    await rig.assertUsable();
    assert.equal(sub.size, 0, "nothing is buffered for the gone subscriber");
  });

  await t.step("send after close", async () => {
    await using rig = await Rig.start();
    const { session } = rig;
    const closing = session.close();
    assertKind(
      await rejected(session.send("too late"), "send() while closing"),
      "closed",
      /Cannot send a turn: the session is closing; start a new session/,
    );
    await closing;
    assertKind(
      await rejected(session.send("too late"), "send() after close"),
      "closed",
      /Cannot send a turn: the session is closed; start a new session/,
    );
    assertKind(await rejected(session.request("get_settings"), "request()"), "closed");
    assertKind(await rejected(session.interrupt(), "interrupt()"), "closed");
    assert.equal(await session.respondToPermission("x", { behavior: "allow" }), false);
    assert.equal((await rig.end()).state, "completed");
  });

  await t.step("close racing send", async (t) => {
    await t.step("send, then close in the same tick", async () => {
      await using rig = await Rig.start();
      const turn = rig.send("racing");
      const closing = rig.session.close();
      const outcome = await turn;
      assert.ok(!outcome.ok);
      assertKind(outcome.error, "closed");
      assert.equal((await closing).state, "completed");
    });
    await t.step("close, then send in the same tick", async () => {
      await using rig = await Rig.start();
      const closing = rig.session.close();
      const outcome = await rig.send("racing");
      assert.ok(!outcome.ok);
      assertKind(outcome.error, "closed");
      assert.equal((await closing).state, "completed");
    });
    await t.step("close while the result is on its way", async () => {
      await using rig = await Rig.start();
      const turn = rig.send("racing");
      await rig.cli.nextWrite("user");
      await tick(0); // the echo has queued its reply
      const closing = rig.session.close();
      const outcome = await turn;
      // Either outcome is fine; what matters is that it settled.
      if (!outcome.ok) assertKind(outcome.error, "closed");
      assert.equal((await closing).state, "completed");
    });
  });

  await t.step("dispose (await using) during a turn", async () => {
    const cli = new ScriptedCli({ echo: false });
    let turn: Promise<Outcome<unknown>> | undefined;
    let kept: DuplexSession | undefined;
    {
      await using session = await DuplexSession.start({ transport: cli.transport });
      kept = session;
      turn = settled(session.send("never answered"), "send()");
      await cli.nextWrite("user");
    }
    const outcome = await turn;
    assert.ok(!outcome.ok);
    assertKind(outcome.error, "closed", /the session was closed/);
    assert.equal(kept.exitStatus.state, "completed");
    assert.equal(cli.closeCalls, 1);
  });

  await t.step({
    name: "send with content JSON cannot encode",
    fn: async () => {
      await using rig = await Rig.start();
      const error = await rejected(
        // deno-lint-ignore no-explicit-any
        rig.session.send([{ type: "text", text: 1n } as any]),
        "send()",
      );
      assert.ok(error instanceof TypeError);
      await rig.assertUsable();
    },
  });

  await t.step({
    name: "request with fields JSON cannot encode",
    fn: async () => {
      await using rig = await Rig.start({ echo: true }, { controlTimeoutMs: 30 });
      let outcome: Promise<unknown> | undefined;
      assert.doesNotThrow(() => {
        outcome = rig.session.request("get_settings", { n: 1n } as Record<string, unknown>);
      });
      assert.ok(await rejected(outcome!, "request()") instanceof TypeError);
      await tick(50);
      await rig.assertUsable();
    },
  });
});

// ---------------------------------------------------------------------------
// Transport faults

Deno.test("fault: transport", async (t) => {
  await t.step("stdin write fails", async () => {
    const decided: string[] = [];
    await using rig = await Rig.start({ echo: false }, {
      onPermission: (request) => {
        decided.push(request.requestId);
        return { behavior: "allow" };
      },
    });
    const { cli, session } = rig;
    cli.failWrites(new Error("EPIPE: broken pipe"));
    const sendError = assertKind(
      await rejected(session.send("x", { signal: rig.life.signal }), "send()"),
      "process_exited",
      /Cannot write to the CLI: its input is broken/,
    );
    assert.match(String((sendError.cause as Error).message), /EPIPE/);
    assert.equal(session.busy, false, "the turn slot is free again");
    assertKind(
      await rejected(session.request("get_settings", {}, { signal: rig.life.signal }), "request"),
      "process_exited",
    );
    // A permission answer that cannot be written is not an unhandled rejection either.
    cli.emit(canUseToolRequest({ requestId: "perm", toolName: "Bash", input: {} }));
    await rig.seen((e) => e.type === "permission_resolved", "the answer attempt");
    assert.deepEqual(decided, ["perm"]);
    // The CLI then dies: the session ends, failed, with its status.
    cli.exit({ code: 1 });
    const exit = await rig.exited;
    assert.ok(exit.ok && exit.value.state === "failed");
  });

  await t.step("exit arrives before the last stdout bytes", async () => {
    await using rig = await Rig.start({ echo: false, chunking: "bytes" });
    const { cli, session } = rig;
    const turn = rig.track("send()", session.send("go", { signal: rig.life.signal }));
    const line = await cli.nextWrite("user");
    const frames = streamTextDeltaFrames("x".repeat(600), { chunkSize: 2 });
    cli.emit(
      initFrame(),
      ...frames,
      resultFrame({ text: "last", userMessageUuid: String(line.uuid) }),
    );
    cli.exit({ code: 0 }); // the process is gone while most of its output is still queued
    const outcome = await turn;
    assert.ok(outcome.ok, "the result written before the exit resolves the send");
    assert.equal((outcome.value as { result: { text: string } }).result.text, "last");
    const status = await rig.end();
    assert.equal(status.state, "completed");
    const streamed = rig.events.flatMap((e) => e.type === "stream_event" ? [e.uuid] : []);
    assert.deepEqual(streamed, frames.map((f) => f.uuid), "no frame was lost");
    assert.deepEqual(
      rig.events.slice(-2).map((e) => e.type),
      ["result", "exit"],
      "the exit comes after the last frame",
    );
  });

  await t.step("the last line has no newline when the CLI exits", async () => {
    await using rig = await Rig.start({ echo: false });
    const { cli, session } = rig;
    const turn = rig.track("send()", session.send("go", { signal: rig.life.signal }));
    const line = await cli.nextWrite("user");
    cli.emitRaw(JSON.stringify(resultFrame({ text: "cut", userMessageUuid: String(line.uuid) })));
    cli.exit({ code: 0 });
    const outcome = await turn;
    assert.ok(outcome.ok);
    await rig.end();
  });

  await t.step("stdout closes before the exit", async () => {
    const gate = Promise.withResolvers<void>();
    await using rig = await Rig.start({ echo: false }, {}, (cli) => async (context) => {
      const inner = await cli.transport(context);
      const closed = inner.closed.then(async (exit) => {
        await gate.promise;
        return exit;
      });
      return wrap(inner, {
        closed,
        close: () => {
          gate.resolve();
          return inner.close().then(() => closed);
        },
      });
    });
    const { cli, session } = rig;
    const first = rig.track("send()", session.send("go", { signal: rig.life.signal }));
    const line = await cli.nextWrite("user");
    cli.emit(
      assistantTextFrame("hi"),
      resultFrame({ text: "hi", userMessageUuid: String(line.uuid) }),
    );
    cli.exit({ code: 1 }); // stdout ends now; the exit status comes later
    assert.ok((await first).ok, "output written before stdout closed is delivered");
    await tick(10);
    assert.equal(session.exitStatus.state, "running", "no status before the exit is known");
    const second = assertKind(
      await rejected(session.send("more", { signal: rig.life.signal }), "a send meanwhile"),
      "process_exited",
    );
    assert.match(second.message, /Cannot write to the CLI: it has ended/);
    gate.resolve();
    const exit = await rig.exited;
    assert.ok(exit.ok && exit.value.state === "failed" && exit.value.code === 1);
  });

  await t.step("the process exits while its stdout stays open", async () => {
    const held = heldStdout();
    const session = await DuplexSession.start({ transport: held.transport });
    const sub = session.subscribe();
    held.push('{"type":"hologram","n":1}\n');
    await tick(5);
    held.exit(EXIT_1);
    const status = await resolved(session.waitForExit(), "waitForExit()", 4000);
    assert.equal(status.state, "failed", "the session ends even though stdout never did");
    const events = await Array.fromAsync(sub);
    assert.deepEqual(events.map((e) => e.type), ["unknown", "diagnostic", "exit"]);
    assert.match(
      events[1]?.type === "diagnostic" ? events[1].message : "",
      /did not end with its peer/,
      "the broken transport is reported, not waited for",
    );
    held.release();
  });

  await t.step({
    name: "the process exits while its stdout stays open: stdout is cancelled",
    fn: async () => {
      const held = heldStdout();
      const session = await DuplexSession.start({ transport: held.transport });
      held.exit(EXIT_1);
      await resolved(session.waitForExit(), "waitForExit()", 4000);
      const cancelled = held.cancelled();
      held.release();
      assert.equal(cancelled, true, "the session cancelled the stdout it gave up on");
    },
  });

  await t.step({
    name: "stderr lines written just before the exit reach subscribers",
    fn: async () => {
      await using rig = await Rig.start({ echo: false });
      for (let i = 0; i < 50; i++) rig.cli.emitStderr(`line ${i}`);
      rig.cli.exit({ code: 1 });
      await rig.end();
      const lines = rig.events.flatMap((e) => e.type === "stderr" ? [e.line] : []);
      assert.deepEqual(lines, Array.from({ length: 50 }, (_, i) => `line ${i}`));
    },
  });
});
