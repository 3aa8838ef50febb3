import assert from "node:assert/strict";
import type { SubprocessOptions } from "../../../../adapters/subprocess/mod.ts";
import { SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import type { SpareKind } from "../../../../adapters/subprocess/pool/pool_events.ts";
import type { Transport, TransportFactory } from "../../../../src/transport/transport.ts";
import { waitGone, within } from "../_helpers.ts";
import { delay, EventLog, fakePool, FakeState } from "./_helpers.ts";

/** The transports a pool started, by pid (the state's `launch` records the pids too). */
function recording(state: FakeState, transports: Map<number, Transport>) {
  return (options: SubprocessOptions): TransportFactory => {
    const factory = state.launch(options);
    return async (open) => {
      const transport = await factory(open);
      if (transport.info.pid !== undefined) transports.set(transport.info.pid, transport);
      return transport;
    };
  };
}

/**
 * Kills a ready spare, waits `ms`, acquires a conversation (a warm spare's
 * or, in the other folder, a parked spare's) and asserts that its first
 * turn runs on another, living process and that the killed one was reaped.
 */
async function killThenAcquire(kind: SpareKind, spares: number, ms: number): Promise<void> {
  await using state = await FakeState.make();
  const log = new EventLog();
  const transports = new Map<number, Transport>();
  await using pool = new SessionPool(fakePool(state, log, {
    ...(kind === "warm" ? { spares } : { parkedSpares: spares }),
    launch: recording(state, transports),
  }));
  await log.waitFor("spare_ready", spares, 15_000);
  const [victim] = state.spawned;
  assert.ok(victim !== undefined && transports.has(victim), "a spare was started");
  Deno.kill(victim, "SIGKILL");
  if (ms > 0) await delay(ms);
  const session = await pool.acquire("a", kind === "warm" ? {} : { cwd: state.other });
  assert.notEqual(session.pid, victim, "the killed spare was handed out");
  const turn = await within(10_000, "the first turn", session.send("hello"));
  assert.match(turn.result.text, /^turn 1 of session /);
  assert.match(turn.result.text, new RegExp(`\\(pid ${session.pid}\\)`));
  const exit = await within(5000, "the killed spare's exit", transports.get(victim)!.closed);
  assert.equal(exit.signal, "SIGKILL", "the killed spare's status was reaped");
  assert.ok(await waitGone(victim, 3000), "the killed spare is gone");
  const via = spares > 1 ? (kind === "warm" ? "spare" : "parked") : "cold";
  assert.equal(log.of("started").at(-1)?.via, via);
  assert.ok(
    log.events.some((event) =>
      (event.type === "handout_failed" || event.type === "spare_died") && event.kind === kind
    ),
    `the dead spare is reported; saw ${log.types}`,
  );
  pool.release("a");
  await pool.close();
  await state.assertAllGone();
}

for (const kind of ["warm", "parked"] as const) {
  Deno.test(
    `SessionPool.acquire() does not hand out a ${kind} spare killed just before it`,
    async (t) => {
      for (const ms of [0, 0, 1, 5, 10, 20]) {
        await t.step(`killed ${ms} ms before: a cold start serves it`, async () => {
          await killThenAcquire(kind, 1, ms);
        });
      }
      for (const ms of [0, 5, 20]) {
        await t.step(`killed ${ms} ms before: the next spare serves it`, async () => {
          await killThenAcquire(kind, 2, ms);
        });
      }
    },
  );
}
