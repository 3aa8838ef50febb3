// deno-lint-ignore-file no-console
/**
 * The failover bench: relays sharing a PostgreSQL session store, on the
 * real CLI (offline, the e2e tests' fake API). Prints one table, as
 * `run.ts` does:
 *
 * - F1: the time from the death of the relay a conversation is on (SIGKILL
 *   to it and its CLI) to the first turn result through the other relay
 *   behind HAProxy (the client's reconnect, the store resume, `claude
 *   --resume` and the turn), median of the rounds; beside it, a new
 *   conversation's first turn through the same balancer (a cold start).
 * - F2a, F2b: a warm turn through a relay that mirrors to a store (and
 *   records each input line, and holds each result until the store has its
 *   turn) vs one without a store: a store in memory (what the relay's
 *   mirroring costs) and PostgreSQL (its server sharing the machine's
 *   cores); turns in rounds, each in another order; the ratio is the median
 *   of each round's ratio (robust to the machine's load drifting).
 *
 * ```sh
 * deno run -P=bench tests/bench/failover_bench.ts              # 5 failovers, 100 warm turns a side
 * deno run -P=bench tests/bench/failover_bench.ts --rounds=2 --turns=10
 * ```
 *
 * Needs the real CLI (`deno run -P=install .ci/install_claude.ts`), HAProxy and
 * PostgreSQL (Debian packages `haproxy`, `postgresql`); says which is missing.
 *
 * @module
 */

import postgres from "postgres";
import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import {
  childrenOf,
  failoverUnavailable,
  kill,
  startHaproxy,
  startRelays,
} from "../e2e/_failover_harness.ts";
import { type PostgresServer, startPostgres } from "../stores/_postgres_server.ts";
import { median, ms, option, printTable, quantile } from "./_measure.ts";

const TOKEN = crypto.randomUUID();

function progress(message: string): void {
  console.error(`[failover bench] ${message}`);
}

interface Setup {
  readonly cli: string;
  readonly root: string;
  readonly env: Record<string, string>;
  readonly pg: PostgresServer;
}

/** One failover: a conversation on one relay, that relay killed, the next turn's result timed. */
async function failover(setup: Setup, round: number): Promise<{ failover: number; cold: number }> {
  const dir = `${setup.root}/round-${round}`;
  const work = `${dir}/work`;
  await Deno.mkdir(work, { recursive: true });
  const relays = await startRelays({
    token: TOKEN,
    workspace: work,
    postgresUrl: setup.pg.url,
    projectKey: `bench-${round}`,
    binary: setup.cli,
    env: setup.env,
  }, dir);
  await using _a = relays[0]!;
  await using _b = relays[1]!;
  await using balancer = await startHaproxy(relays.map((relay) => relay.port), dir);
  const started = performance.now();
  await using session = await DuplexSession.start({
    transport: remote({
      url: balancer.urlFor(`conversation-${round}`),
      token: TOKEN,
      heartbeatMs: 2_000,
      reconnect: { attempts: 40, initialDelayMs: 50, maxDelayMs: 250 },
    }),
  });
  await session.send("My name is Ada.");
  const cold = performance.now() - started;
  const healths = await Promise.all(relays.map((relay) => relay.health()));
  const dead = relays[healths.findIndex((health) => health?.sessions === 1)];
  if (dead === undefined) throw new Error(`No relay holds the conversation: ${healths}`);
  const [cliPid] = await childrenOf(dead.pid);
  const killed = performance.now();
  dead.kill();
  if (cliPid !== undefined) kill(cliPid);
  const turn = await session.send("What is my name?", { timeoutMs: 60_000 });
  const took = performance.now() - killed;
  if (turn.result.text !== "Echo: What is my name?") throw new Error("Wrong result");
  await session.close();
  return { failover: took, cold };
}

/** Which relay a warm turn goes through: no store, one in memory, PostgreSQL. */
type Side = "off" | "memory" | "postgres";

/** Warm turns through relays without a store, with one in memory, with PostgreSQL, in turn. */
async function mirrorCost(setup: Setup, turns: number): Promise<Record<Side, number[]>> {
  const work = `${setup.root}/warm-work`;
  await Deno.mkdir(work, { recursive: true });
  const sql = postgres(setup.pg.url, { onnotice: () => {}, max: 4 });
  try {
    const cli = {
      binary: setup.cli,
      env: setup.env,
      clearEnv: true,
      hostSignal: "ignore",
    } as const;
    const base = { tokens: [TOKEN], workspace: work, tenancy: "shared", cli } as const;
    await using off = serveRelay(base);
    await using memory = serveRelay({
      ...base,
      sessionStore: new InMemorySessionStore(),
      projectKey: "bench-warm",
    });
    await using pg = serveRelay({
      ...base,
      sessionStore: new PostgresSessionStore(sql),
      projectKey: "bench-warm",
    });
    const sessions: [Side, DuplexSession][] = [];
    for (const [side, relay] of [["off", off], ["memory", memory], ["postgres", pg]] as const) {
      sessions.push([
        side,
        await DuplexSession.start({ transport: remote({ url: relay.url, token: TOKEN }) }),
      ]);
    }
    try {
      const times: Record<Side, number[]> = { off: [], memory: [], postgres: [] };
      for (let i = 0; i < turns + 3; i++) {
        // Each round in another order, so that no side always follows the same one.
        for (let k = 0; k < sessions.length; k++) {
          const [side, session] = sessions[(i + k) % sessions.length]!;
          const start = performance.now();
          await session.send(`warm turn ${i}`);
          if (i >= 3) times[side].push(performance.now() - start); // the first turns warm up
        }
      }
      return times;
    } finally {
      for (const [, session] of sessions) await session.close();
    }
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/** The median of the ratios of the turns of one round (robust to the load drifting). */
function pairedRatio(on: readonly number[], off: readonly number[]): number {
  return median(on.map((value, i) => value / off[i]!));
}

const missing = failoverUnavailable();
if (missing !== undefined) {
  console.error(`Cannot run the failover bench: ${missing}`);
  Deno.exit(2);
}
const rounds = option("rounds", 5);
const turns = option("turns", 100);
const cli = (cliPath() as { path: string }).path;
const root = await Deno.makeTempDir({ prefix: "duplex-failover-bench-" });
const api = await startFakeApi();
try {
  await using pg = await startPostgres();
  const setup: Setup = { cli, root, env: sandboxEnv(api, `${root}/home`), pg };
  await Deno.mkdir(`${root}/home`);
  const failovers: number[] = [];
  const colds: number[] = [];
  for (let round = 0; round < rounds; round++) {
    progress(`failover ${round + 1}/${rounds}`);
    const got = await failover(setup, round);
    failovers.push(got.failover);
    colds.push(got.cold);
  }
  progress(`mirroring cost: ${turns} warm turns a side`);
  const warm = await mirrorCost(setup, turns);
  const row = (id: string, side: Side, what: string): string[] => {
    const cost = pairedRatio(warm[side], warm.off);
    return [
      id,
      `warm turn through a relay mirroring to ${what} vs no store (median of ${turns})`,
      `${ms(median(warm[side]))} (p90 ${ms(quantile(warm[side], 0.9))})`,
      `${ms(median(warm.off))} (p90 ${ms(quantile(warm.off, 0.9))})`,
      `${cost.toFixed(3)}x`,
      "<= 1.05x",
      cost <= 1.05 ? "yes" : "NO",
    ];
  };
  const rows = [
    ["#", "workload", "ours", "peer or limit", "ratio", "target", "met"],
    [
      "F1",
      `relay killed -> first result through the other relay behind HAProxy (median of ${rounds})`,
      `${ms(median(failovers))} (max ${ms(Math.max(...failovers))})`,
      `cold first turn ${ms(median(colds))}`,
      `${(median(failovers) / median(colds)).toFixed(2)}x`,
      "",
      "",
    ],
    row("F2a", "memory", "a store in memory (the relay's own cost)"),
    row("F2b", "postgres", "PostgreSQL (its server on the same cores)"),
  ];
  printTable(rows);
} finally {
  await api.close();
  await Deno.remove(root, { recursive: true }).catch(() => {});
}
