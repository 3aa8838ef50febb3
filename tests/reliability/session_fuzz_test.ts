/*
 * Property test of the session: a ScriptedCli writes random sequences of
 * valid and invalid frames and raw garbage, cut at random, while the test
 * performs random operations (send, interrupt, request, respondToPermission,
 * subscribe/unsubscribe, slow reads, aborts, close, crash). Invariants:
 *
 * - every send / request / interrupt / respondToPermission settles exactly
 *   once, with an allowed outcome; after close nothing stays pending;
 * - every subscriber that keeps up receives the events of what the CLI wrote
 *   in order, with no gap (a contiguous window of the reference list);
 * - a drop-oldest subscriber that lags receives exactly its twin's events
 *   minus the dropped ones, and its `lagged` counts add up to `dropped`;
 * - each permission request is resolved exactly once; the session never
 *   reports its read loop failing; no listener is left on a long-lived signal.
 *
 * Runs: 50 by default; set FUZZ_RUNS for a long run, FUZZ_SEED to replay one.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DuplexSession,
  isDuplexError,
  type PermissionHandler,
  type PermissionRequest,
  type SessionEvent,
  type Subscription,
  type Turn,
} from "../../mod.ts";
import {
  assistantTextFrame,
  canUseToolRequest,
  commandLifecycleFrame,
  controlCancel,
  controlError,
  controlSuccess,
  initFrame,
  resultFrame,
  streamTextDeltaFrames,
} from "../../src/testing/frames.ts";
import { type Chunking, ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { countListeners, tick } from "../session/_helpers.ts";

function envNumber(name: string, fallback: number): number {
  try {
    const value = Deno.env.get(name);
    return value === undefined ? fallback : Number(value);
  } catch {
    return fallback; // no env permission
  }
}

const RUNS = envNumber("FUZZ_RUNS", 50);
const SEED = envNumber("FUZZ_SEED", Number.NaN);
const MAX_LINE = 2048;
const BIG = 100_000;

// ---------------------------------------------------------------------------
// Operations

type CliOp =
  | {
    k: "frame";
    kind: "assistant" | "stream" | "system" | "user" | "lifecycle" | "unknown" | "malformed";
  }
  | { k: "result"; target: "turn" | "other" | "none" }
  | { k: "reply" }
  | { k: "garbage"; kind: "noise" | "truncated" | "utf8" | "long" | "array" }
  | { k: "stray" }
  | { k: "answer"; ok: boolean; twice: boolean }
  | { k: "ask" }
  | { k: "withdraw"; pick: number }
  | { k: "inbound"; subtype: "ui_thing" | "elicitation" | "hook_callback" }
  | { k: "noid" }
  | { k: "stderr" };

type HostOp =
  | { k: "send"; timeoutMs: number | null; abortable: boolean }
  | { k: "interrupt" }
  | { k: "request"; subtype: "get_settings" | "mcp_status" | "custom_x"; timeoutMs: number | null }
  | { k: "respond"; pick: number; decision: "allow" | "deny" | "bad" | "defer" }
  | { k: "abort"; pick: number }
  | { k: "subscribe"; lagging: boolean; capacity: number }
  | { k: "unsubscribe"; pick: number }
  | { k: "read"; pick: number; n: number }
  | { k: "wait"; ms: number };

type EndOp = { k: "close" } | { k: "exit"; code: number };

type Op = CliOp | HostOp | EndOp;

const cliOp: fc.Arbitrary<CliOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("frame" as const),
      kind: fc.constantFrom(
        "assistant",
        "stream",
        "system",
        "user",
        "lifecycle",
        "unknown",
        "malformed",
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("result" as const),
      target: fc.constantFrom("turn", "turn", "other", "none"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("garbage" as const),
      kind: fc.constantFrom("noise", "truncated", "utf8", "long", "array"),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ k: "reply" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "stray" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("answer" as const),
      ok: fc.boolean(),
      twice: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ k: "ask" as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("withdraw" as const), pick: fc.nat(9) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("inbound" as const),
      subtype: fc.constantFrom("ui_thing", "elicitation", "hook_callback"),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ k: "noid" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "stderr" as const }) },
);

const timeout = fc.option(fc.integer({ min: 3, max: 25 }), { nil: null, freq: 3 });

const hostOp: fc.Arbitrary<HostOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("send" as const),
      timeoutMs: timeout,
      abortable: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ k: "interrupt" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("request" as const),
      subtype: fc.constantFrom("get_settings", "mcp_status", "custom_x"),
      timeoutMs: timeout,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("respond" as const),
      pick: fc.nat(9),
      decision: fc.constantFrom("allow", "deny", "bad", "defer"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("abort" as const), pick: fc.nat(9) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("subscribe" as const),
      lagging: fc.boolean(),
      capacity: fc.integer({ min: 1, max: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("unsubscribe" as const), pick: fc.nat(9) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("read" as const),
      pick: fc.nat(9),
      n: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 4 }) }),
  },
);

const endOp: fc.Arbitrary<EndOp> = fc.oneof(
  fc.constant({ k: "close" as const }),
  fc.record({ k: fc.constant("exit" as const), code: fc.constantFrom(0, 1, 137) }),
);

const script: fc.Arbitrary<Op[]> = fc.tuple(
  fc.array(fc.oneof({ weight: 3, arbitrary: cliOp }, { weight: 2, arbitrary: hostOp }), {
    maxLength: 60,
    size: "max",
  }),
  fc.option(endOp, { nil: undefined }),
  fc.array(hostOp, { maxLength: 4 }),
).map(([body, end, after]) => end ? [...body, end, ...after] : body);

interface Setup {
  chunking: Chunking;
  onUnresponsive: "close" | "keep";
  interruptGraceMs: number;
  permissionTimeoutMs: number | null;
}

const setup: fc.Arbitrary<Setup> = fc.record({
  chunking: fc.oneof(
    fc.constant<Chunking>("line"),
    fc.constant<Chunking>("bytes"),
    fc.integer({ min: 1, max: 300 }).map((maxChunk): Chunking => ({ maxChunk })),
  ),
  onUnresponsive: fc.constantFrom("close" as const, "keep" as const),
  interruptGraceMs: fc.integer({ min: 5, max: 25 }),
  permissionTimeoutMs: fc.option(fc.integer({ min: 5, max: 30 }), { nil: null, freq: 2 }),
});

// ---------------------------------------------------------------------------
// The run

/** What a subscriber that keeps up sees of one tagged emission, as "tag:kind". */
function tagOf(event: SessionEvent): string | undefined {
  switch (event.type) {
    case "diagnostic": {
      const match = /#fz(\d+)#/.exec(`${event.excerpt ?? ""} ${event.message}`);
      return match ? `${match[1]}:diag:${event.kind}` : undefined;
    }
    case "permission_request": {
      const match = /#fz(\d+)#/.exec(event.request.requestId);
      return match ? `${match[1]}:permission_request` : undefined;
    }
    case "unknown":
      return typeof event.frame.fz === "number" ? `${event.frame.fz}:unknown` : undefined;
    default: {
      const tag = (event as { fz?: unknown }).fz;
      return typeof tag === "number" ? `${tag}:${event.type}` : undefined;
    }
  }
}

function tags(events: readonly SessionEvent[]): string[] {
  return events.flatMap((e) => {
    const tag = tagOf(e);
    return tag === undefined ? [] : [tag];
  });
}

interface Reader {
  sub: Subscription<SessionEvent>;
  events: SessionEvent[];
  loop: Promise<void>;
  unsubscribed: boolean;
}

interface Lagging {
  sub: Subscription<SessionEvent>;
  reads: Promise<IteratorResult<SessionEvent, undefined>>[];
  twin: Reader;
}

interface Tracked {
  what: string;
  settlements: number;
  outcome: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
  check: (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => void;
}

function reader(session: DuplexSession, signal: AbortSignal): Reader {
  const sub = session.subscribe({ capacity: BIG, signal });
  const events: SessionEvent[] = [];
  const loop = (async () => {
    for await (const event of sub) events.push(event);
  })();
  return { sub, events, loop, unsubscribed: false };
}

function kindIn(...kinds: string[]): (error: unknown) => void {
  return (error) => {
    assert.ok(
      isDuplexError(error) && kinds.includes(error.kind),
      `unexpected rejection: ${String(error)} (allowed: ${kinds})`,
    );
  };
}

async function run(params: Setup, ops: readonly Op[]): Promise<void> {
  const cli = new ScriptedCli({
    echo: false,
    chunking: params.chunking,
  });
  const life = new AbortController();
  const listeners = countListeners(life.signal);
  const asked: string[] = [];
  const handled = new Map<string, PermissionRequest>();
  const handler: PermissionHandler = (request) => {
    handled.set(request.requestId, request);
    const tag = Number(/#fz(\d+)#/.exec(request.requestId)?.[1] ?? 0);
    switch (tag % 5) {
      case 0:
        return { behavior: "allow" };
      case 1:
        return { behavior: "deny", message: "fuzz says no" };
      case 2:
        return { behavior: "defer" };
      case 3:
        throw new Error("fuzz handler failure");
      default:
        return new Promise((_, reject) => {
          request.signal.addEventListener("abort", () => reject(request.signal.reason), {
            once: true,
          });
        });
    }
  };
  const session = await DuplexSession.start({
    transport: cli.transport,
    onPermission: handler,
    maxLineBytes: MAX_LINE,
    interruptGraceMs: params.interruptGraceMs,
    onUnresponsive: params.onUnresponsive,
    ...(params.permissionTimeoutMs === null
      ? {}
      : { permissionTimeoutMs: params.permissionTimeoutMs }),
  });
  const main = reader(session, life.signal);
  const readers: Reader[] = [];
  const lagging: Lagging[] = [];
  const tracked: Tracked[] = [];
  const aborters: { controller: AbortController; reason: Error; listeners: () => number }[] = [];
  const expected: string[] = [];
  const answered = new Set<string>();
  let exited = false;
  let tag = 0;

  const track = (
    what: string,
    promise: Promise<unknown>,
    check: Tracked["check"],
  ): void => {
    const entry: Tracked = { what, settlements: 0, outcome: undefined, check };
    tracked.push(entry);
    promise.then(
      (value) => {
        entry.settlements++;
        entry.outcome = { ok: true, value };
      },
      (error) => {
        entry.settlements++;
        entry.outcome = { ok: false, error };
      },
    );
  };
  const line = (text: string): void => cli.emitRaw(`${text}\n`);
  const lastUserUuid = (): string | undefined => {
    const users = cli.received.filter((f) => f.type === "user");
    const uuid = users.at(-1)?.uuid;
    return typeof uuid === "string" ? uuid : undefined;
  };
  const openRequests = (): Record<string, unknown>[] => {
    const cancelled = new Set(
      cli.received.filter((f) => f.type === "control_cancel_request").map((f) => f.request_id),
    );
    return cli.received.filter((f) =>
      f.type === "control_request" && !answered.has(String(f.request_id)) &&
      !cancelled.has(f.request_id)
    );
  };

  const cliStep = (op: CliOp): void => {
    const n = ++tag;
    const id = `#fz${n}#`;
    switch (op.k) {
      case "frame": {
        const frame: Record<string, unknown> = op.kind === "assistant"
          ? { ...assistantTextFrame(`text ${n}`) }
          : op.kind === "stream"
          ? { ...streamTextDeltaFrames(`s${n}`)[2] }
          : op.kind === "system"
          ? { ...initFrame() }
          : op.kind === "user"
          ? { type: "user", message: { role: "user", content: `replayed ${n}` } }
          : op.kind === "lifecycle"
          ? { ...commandLifecycleFrame(`cmd-${n}`, "queued") }
          : op.kind === "unknown"
          ? { type: "hologram", beam: n }
          : { type: "assistant", message: "not an object" };
        frame.fz = n;
        cli.emit(frame);
        const kind = op.kind === "stream"
          ? "stream_event"
          : op.kind === "lifecycle"
          ? "command_lifecycle"
          : op.kind === "malformed"
          ? "unknown"
          : op.kind;
        expected.push(`${n}:${kind}`);
        return;
      }
      case "result": {
        const uuid = op.target === "turn"
          ? lastUserUuid()
          : op.target === "other"
          ? "someone-else"
          : undefined;
        cli.emit({
          ...resultFrame({
            text: `result ${n}`,
            ...(uuid === undefined ? {} : { userMessageUuid: uuid }),
          }),
          fz: n,
        });
        expected.push(`${n}:result`);
        return;
      }
      case "reply": {
        // A whole turn's output for the last user line, as the CLI writes it.
        const uuid = lastUserUuid();
        const ids = uuid === undefined ? {} : { userMessageUuid: uuid };
        cli.emit(
          { ...initFrame(), fz: n },
          { ...assistantTextFrame(`reply ${n}`, ids), fz: n },
          { ...resultFrame({ text: `reply ${n}`, ...ids }), fz: n },
        );
        expected.push(`${n}:system`, `${n}:assistant`, `${n}:result`);
        return;
      }
      case "garbage":
        switch (op.kind) {
          case "noise":
            line(`Warning ${id}: not a frame`);
            expected.push(`${n}:diag:noise`);
            return;
          case "array":
            line(`["${id}", 1]`);
            expected.push(`${n}:diag:noise`);
            return;
          case "truncated":
            line(`{"type":"assistant","x":"${id}","message":{"rol`);
            expected.push(`${n}:diag:invalid_json`);
            return;
          case "long":
            line(`{"x":"${id}","pad":"${"x".repeat(MAX_LINE + 500)}"}`);
            expected.push(`${n}:diag:line_too_long`);
            return;
          case "utf8": {
            const encoder = new TextEncoder();
            cli.emitRaw(
              new Uint8Array([
                ...encoder.encode(
                  `{"type":"assistant","fz":${n},"message":{"role":"assistant","content":` +
                    `[{"type":"text","text":"${id}`,
                ),
                0xff,
                ...encoder.encode('"}]}}\n'),
              ]),
            );
            expected.push(`${n}:diag:invalid_utf8`);
            expected.push(`${n}:assistant`);
            return;
          }
        }
        return;
      case "stray":
        cli.emit(controlSuccess(`stray${id}`, {}));
        expected.push(`${n}:diag:stray_control_response`);
        return;
      case "answer": {
        const request = openRequests()[0];
        if (!request) return;
        const requestId = String(request.request_id);
        answered.add(requestId);
        const subtype = (request.request as { subtype?: string }).subtype;
        const frame = op.ok
          ? controlSuccess(requestId, subtype === "interrupt" ? { still_queued: [] } : {})
          : controlError(requestId, "fuzz refuses", "fuzz_error");
        cli.emit(frame);
        if (op.twice) cli.emit(frame);
        return;
      }
      case "ask":
        asked.push(`perm${id}`);
        cli.emit(canUseToolRequest({ requestId: `perm${id}`, toolName: "Bash", input: { n } }));
        expected.push(`${n}:permission_request`);
        return;
      case "withdraw": {
        const requestId = asked[op.pick % Math.max(1, asked.length)];
        if (requestId) cli.emit(controlCancel(requestId));
        return;
      }
      case "inbound":
        cli.emit({
          type: "control_request",
          request_id: `in${id}`,
          request: { subtype: op.subtype, callback_id: "none", message: "?" },
        });
        return;
      case "noid":
        cli.emit({ type: "control_request", request: { subtype: "can_use_tool" }, fz: n });
        expected.push(`${n}:unknown`);
        return;
      case "stderr":
        cli.emitStderr(`stderr ${n}`);
        return;
    }
  };

  const hostStep = async (op: HostOp): Promise<void> => {
    switch (op.k) {
      case "send": {
        const reason = new Error("fuzz abort");
        const controller = new AbortController();
        if (op.abortable) {
          aborters.push({ controller, reason, listeners: countListeners(controller.signal) });
        }
        const signal = op.abortable ? controller.signal : life.signal;
        track(
          "send",
          session.send(`turn ${tracked.length}`, {
            signal,
            ...(op.timeoutMs === null ? {} : { timeoutMs: op.timeoutMs }),
          }),
          (outcome) => {
            if (outcome.ok) {
              const turn = outcome.value as Turn;
              const raw = turn.result.raw;
              const uuids = raw.user_message_uuids;
              assert.ok(uuids === undefined || uuids.includes(turn.uuid), "a result of this turn");
              if (turn.events.length > 0) assert.equal(turn.events.at(-1), raw);
            } else if (outcome.error !== reason) {
              kindIn("turn_in_flight", "closed", "process_exited", "timeout")(outcome.error);
            }
          },
        );
        return;
      }
      case "abort": {
        const aborter = aborters[op.pick % Math.max(1, aborters.length)];
        aborter?.controller.abort(aborter.reason);
        return;
      }
      case "interrupt":
        track("interrupt", session.interrupt({ signal: life.signal }), (outcome) => {
          if (!outcome.ok) {
            kindIn("control_failed", "timeout", "closed", "process_exited")(outcome.error);
          }
        });
        return;
      case "request":
        track(
          `request(${op.subtype})`,
          session.request(op.subtype, {}, {
            signal: life.signal,
            ...(op.timeoutMs === null ? {} : { timeoutMs: op.timeoutMs }),
          }),
          (outcome) => {
            if (!outcome.ok) {
              kindIn("control_failed", "timeout", "closed", "process_exited")(outcome.error);
            }
          },
        );
        return;
      case "respond": {
        const requestId = asked[op.pick % Math.max(1, asked.length)] ?? "unknown-id";
        const decision = op.decision === "allow"
          ? { behavior: "allow" as const }
          : op.decision === "deny"
          ? { behavior: "deny" as const, message: "host says no" }
          : op.decision === "defer"
          ? { behavior: "defer" }
          : { behavior: "sometimes" };
        track(
          "respondToPermission",
          session.respondToPermission(requestId, decision as { behavior: "allow" }),
          (outcome) => {
            if (op.decision === "bad") {
              assert.ok(!outcome.ok && outcome.error instanceof TypeError);
            } else if (op.decision === "defer") {
              assert.ok(!outcome.ok && isDuplexError(outcome.error, "cannot_defer_again"));
            } else {
              assert.ok(outcome.ok && typeof outcome.value === "boolean");
            }
          },
        );
        return;
      }
      case "subscribe":
        if (op.lagging) {
          const sub = session.subscribe({ capacity: op.capacity, signal: life.signal });
          const twin = reader(session, life.signal); // same sync block: same events from here on
          lagging.push({ sub, reads: [], twin });
        } else {
          readers.push(reader(session, life.signal));
        }
        return;
      case "unsubscribe": {
        const target = readers[op.pick % Math.max(1, readers.length)];
        if (target && !target.unsubscribed) {
          target.unsubscribed = true;
          target.sub.unsubscribe();
        }
        return;
      }
      case "read": {
        const target = lagging[op.pick % Math.max(1, lagging.length)];
        for (let i = 0; target && i < op.n; i++) target.reads.push(target.sub.next());
        return;
      }
      case "wait":
        await tick(op.ms);
        return;
    }
  };

  for (const op of ops) {
    if (op.k === "close") {
      track("close", session.close(), (outcome) => assert.ok(outcome.ok));
    } else if (op.k === "exit") {
      if (!exited && session.state === "ready") cli.exit({ code: op.code });
      exited = true;
    } else if (isCliOp(op)) {
      // Only what the CLI writes while it runs can be delivered.
      if (!exited && session.state === "ready") cliStep(op);
    } else {
      await hostStep(op);
    }
    await tick(0);
  }

  // The end: close, then everything must settle.
  const status = await within(session.close(), "close()", 3000);
  assert.notEqual(status.state, "running");
  await within(Promise.all([main.loop, ...readers.map((r) => r.loop)]), "the readers", 3000);
  await within(Promise.all(lagging.map((l) => l.twin.loop)), "the twins", 3000);
  for (const entry of lagging) {
    for (;;) {
      const next = entry.sub.next();
      entry.reads.push(next);
      if ((await next).done) break;
    }
  }
  await tick(0);
  for (const entry of tracked) {
    assert.equal(entry.settlements, 1, `${entry.what} settled exactly once`);
    entry.check(entry.outcome!);
  }

  // Events: the reference list, in order, for every subscriber that kept up.
  assert.deepEqual(tags(main.events), expected, "the first subscriber saw everything in order");
  assert.equal(main.events.at(-1)?.type, "exit");
  assert.equal(main.events.filter((e) => e.type === "exit").length, 1);
  assert.ok(
    !main.events.some((e) => e.type === "diagnostic" && e.kind === "stream_error"),
    "the read loop never failed",
  );
  for (const r of [...readers, ...lagging.map((l) => l.twin)]) {
    const seen = tags(r.events);
    if (r.unsubscribed) {
      assert.ok(isWindow(seen, expected), `a contiguous window: ${seen} of ${expected}`);
    } else {
      assert.deepEqual(seen, expected.slice(expected.length - seen.length), "a suffix");
      assert.equal(r.events.at(-1)?.type, "exit");
    }
  }
  // Lagging drop-oldest subscribers: their twin's events, minus exactly the dropped ones.
  for (const entry of lagging) {
    const got: SessionEvent[] = [];
    for (const read of entry.reads) {
      const result = await read;
      if (!result.done) got.push(result.value);
    }
    const twin = entry.twin.events;
    let at = 0;
    let lagged = 0;
    for (const event of got) {
      if (event.type === "lagged") {
        assert.ok(event.count > 0);
        at += event.count;
        lagged += event.count;
        continue;
      }
      // The same object (a subscription made after the end gets its own exit event).
      if (event.type === "exit") assert.deepEqual(event, twin[at]);
      else assert.equal(event, twin[at], "the same event, in order, after each gap");
      at++;
    }
    assert.equal(at, twin.length, "received + dropped == published");
    assert.equal(lagged, entry.sub.dropped, "lagged counts add up to dropped");
  }
  // Permissions: each request resolved once; the withdrawn ones had their signal aborted.
  const requested = main.events.flatMap((e) =>
    e.type === "permission_request" ? [e.request.requestId] : []
  );
  for (const requestId of requested) {
    const resolutions = main.events.filter((e) =>
      e.type === "permission_resolved" && e.requestId === requestId
    );
    assert.equal(resolutions.length, 1, `${requestId} resolved exactly once`);
    const resolution = resolutions[0]!;
    if (resolution.type === "permission_resolved" && resolution.behavior === "cancelled") {
      assert.equal(handled.get(requestId)?.signal.aborted, true, `${requestId} signal aborted`);
    }
  }
  assert.deepEqual(session.pendingPermissions, []);
  assert.equal(session.busy, false);
  assert.equal(listeners(), 0, "no listener left on the long-lived signal");
  for (const aborter of aborters) assert.equal(aborter.listeners(), 0, "nor on a send's signal");
}

function isCliOp(op: Op): op is CliOp {
  return [
    "frame",
    "result",
    "reply",
    "garbage",
    "stray",
    "answer",
    "ask",
    "withdraw",
    "inbound",
    "noid",
    "stderr",
  ].includes(op.k);
}

function isWindow(part: readonly string[], whole: readonly string[]): boolean {
  if (part.length === 0) return true;
  for (let start = 0; start + part.length <= whole.length; start++) {
    if (part.every((tag, i) => whole[start + i] === tag)) return true;
  }
  return false;
}

async function within<T>(promise: Promise<T>, what: string, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("session fuzz: random frames, garbage, cuts and operations keep every invariant", async () => {
  await fc.assert(fc.asyncProperty(setup, script, run), {
    numRuns: RUNS,
    ...(Number.isFinite(SEED) ? { seed: SEED } : {}),
  });
});
