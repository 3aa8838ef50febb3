/**
 * Priming a warm spare (`primeSpares`, `_primer.ts`): the priming line, the
 * CLI's answer to it hidden from the session and every other frame passed
 * in order, chunks cut anywhere, a refusal, an end or an abort while
 * priming, and the pool's use of it (spares primed before they are ready,
 * parked spares and cold starts not, a refused priming line a failed spare).
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../../../src/session/duplex_session.ts";
import { isDuplexError } from "../../../../src/errors.ts";
import { type Primer, primer, PRIMING_LINE } from "../../../../adapters/subprocess/pool/_primer.ts";
import { SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import type { PoolEvent } from "../../../../adapters/subprocess/pool/pool_events.ts";
import {
  type Chunking,
  initFrame,
  resultFrame,
  ScriptedCli,
  type ScriptRule,
} from "../../../../src/testing/mod.ts";

const LIMIT = { timeoutMs: 5000 };
const NO_TURNS = { ok: 0, error: 0, aborted: 0 };

/** The priming line, as the CLI reads it. */
function isPriming(frame: Record<string, unknown>): boolean {
  return frame.type === "user" && frame.shouldQuery === false;
}

/** A fake CLI that answers the priming line as 2.1.332 does (an init, an empty result). */
function primable(
  options: { chunking?: Chunking; refuse?: boolean; extra?: unknown[] } = {},
): ScriptedCli {
  const rule: ScriptRule = {
    match: isPriming,
    reply: () => [
      initFrame(),
      ...(options.extra ?? []),
      options.refuse
        ? resultFrame({ subtype: "error_during_execution", isError: true, errors: ["no"] })
        : resultFrame({ text: "", numTurns: 0, totalCostUsd: 0 }),
    ],
  };
  return new ScriptedCli({ echo: true, rules: [rule], chunking: options.chunking ?? "line" });
}

/** A session over a primer, initialised: what `primeSpares` starts. */
async function primingSession(cli: ScriptedCli): Promise<[Primer, DuplexSession]> {
  const primed = primer(cli.transport);
  const session = await DuplexSession.start({ initialize: true, transport: primed.factory });
  await session.initialized;
  return [primed, session];
}

Deno.test("primer: the priming line's answer is hidden; the session sees a plain spare", async (t) => {
  for (const chunking of ["line", "bytes", { maxChunk: 7 }] as const) {
    await t.step(`chunks: ${JSON.stringify(chunking)}`, async () => {
      const marker = { type: "system", subtype: "status", status: null, "session_id": "s" };
      const cli = primable({ chunking, extra: [marker] });
      const primed = primer(cli.transport);
      await using session = await DuplexSession.start({
        initialize: true,
        transport: primed.factory,
      });
      const events = session.subscribe({ capacity: 256 });
      await session.initialized;
      await primed.prime(AbortSignal.timeout(5000));
      assert.deepEqual(cli.received.at(-1), JSON.parse(PRIMING_LINE));
      assert.deepEqual(session.stats.turns, NO_TURNS, "the priming turn is not the session's");
      const turn = await session.send("hello", LIMIT);
      assert.equal(turn.result.text, "Echo: hello");
      assert.deepEqual(session.stats.turns, { ...NO_TURNS, ok: 1 });
      await session.close();
      const seen: string[] = [];
      for await (const event of events) {
        const subtype = "subtype" in event ? `/${String(event.subtype)}` : "";
        seen.push(`${event.type}${subtype}`);
      }
      const all = seen.join(" ");
      assert.equal(seen.filter((type) => type.startsWith("result")).length, 1, all);
      assert.equal(seen.filter((type) => type === "system/init").length, 1, all);
      assert.ok(seen.indexOf("system/status") < seen.indexOf("system/init"), `in order: ${all}`);
    });
  }
});

Deno.test("primer: a refusal, an end and an abort while priming reject, typed", async (t) => {
  await t.step("an error result rejects with protocol", async () => {
    const [primed, opened] = await primingSession(primable({ refuse: true }));
    await using _session = opened;
    await assert.rejects(
      primed.prime(AbortSignal.timeout(5000)),
      (error) => isDuplexError(error, "protocol") && /refused the priming line/.test(error.message),
    );
  });
  await t.step("the CLI ending first rejects with process_exited", async () => {
    const cli = new ScriptedCli({ echo: true, rules: [{ match: isPriming, reply: () => [] }] });
    const [primed, opened] = await primingSession(cli);
    await using _session = opened;
    const priming = primed.prime(AbortSignal.timeout(5000));
    await cli.nextWrite(isPriming);
    cli.exit({ code: 1 });
    await assert.rejects(priming, (error) => isDuplexError(error, "process_exited"));
  });
  await t.step("an abort rejects with its reason; a second prime is refused", async () => {
    const cli = new ScriptedCli({ echo: true, rules: [{ match: isPriming, reply: () => [] }] });
    const [primed, opened] = await primingSession(cli);
    await using _session = opened;
    const controller = new AbortController();
    const priming = primed.prime(controller.signal);
    await cli.nextWrite(isPriming);
    controller.abort(new Error("too slow"));
    await assert.rejects(priming, /too slow/);
    await assert.rejects(
      primed.prime(AbortSignal.timeout(5000)),
      (error) => isDuplexError(error, "invalid_argument"),
    );
  });
  await t.step("a CLI gone before the line is written rejects with process_exited", async () => {
    const cli = primable();
    const [primed, opened] = await primingSession(cli);
    await using session = opened;
    cli.exit({ code: 1 });
    await session.waitForExit({ timeoutMs: 5000 });
    await assert.rejects(
      primed.prime(AbortSignal.timeout(5000)),
      (error) => isDuplexError(error, "process_exited") || isDuplexError(error, "closed"),
    );
  });
  await t.step("before the transport is open", async () => {
    const primed = primer(primable().transport);
    await assert.rejects(
      primed.prime(AbortSignal.timeout(5000)),
      (e) => isDuplexError(e, "closed"),
    );
  });
});

Deno.test("SessionPool primeSpares: warm spares are primed before they are ready", async (t) => {
  const clis: { cli: ScriptedCli; parked: boolean }[] = [];
  const events: PoolEvent[] = [];
  const make = (refuse: boolean) =>
    new SessionPool({
      spares: 1,
      primeSpares: true,
      onEvent: (event) => void events.push(event),
      launch: (process) => {
        const cli = primable({ refuse });
        clis.push({ cli, parked: process.awaitClaim === true });
        return cli.transport;
      },
    });
  await t.step("a primed spare serves the first turn, which alone is the session's", async () => {
    await using pool = make(false);
    await pool.withSession("a", async (session) => {
      const started = events.find((e) => e.type === "started");
      assert.equal(started?.type === "started" && started.via, "spare");
      const first = clis[0]!.cli;
      assert.ok(first.received.some(isPriming), "the spare got the priming line");
      assert.deepEqual(session.stats.turns, NO_TURNS);
      const turn = await session.send("hi", LIMIT);
      assert.equal(turn.result.text, "Echo: hi");
      assert.deepEqual(session.stats.turns, { ...NO_TURNS, ok: 1 });
    });
  });
  await t.step("a cold start is not primed", async () => {
    clis.length = 0;
    await using pool = new SessionPool({
      primeSpares: true,
      launch: () => {
        const cli = primable();
        clis.push({ cli, parked: false });
        return cli.transport;
      },
    });
    await pool.withSession("b", (session) => session.send("hi", LIMIT));
    assert.equal(clis.length, 1);
    assert.ok(!clis[0]!.cli.received.some(isPriming));
  });
  await t.step(
    "a spare whose CLI refuses the line is a failed spare, not a ready one",
    async () => {
      events.length = 0;
      await using pool = make(true);
      const deadline = Date.now() + 5000;
      while (!events.some((e) => e.type === "spare_failed") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const failed = events.find((e) => e.type === "spare_failed");
      assert.ok(failed?.type === "spare_failed" && /priming line/.test(failed.error.message));
      assert.ok(!events.some((e) => e.type === "spare_ready"));
      assert.equal(pool.health.spares, 0);
    },
  );
});

Deno.test("SessionPool primeSpares must be a boolean", () => {
  assert.throws(
    () => new SessionPool({ primeSpares: "yes" as unknown as boolean }),
    /primeSpares must be a boolean/,
  );
});
