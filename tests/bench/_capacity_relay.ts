/**
 * A relay's per-unit costs, for the capacity model: a relay in a process of
 * its own (`_capacity_relay_child.ts`, over the pool's stand-in CLI) whose
 * memory is read before and after `connections` clients have each opened a
 * conversation and taken one turn (the slope is the cost of an open
 * connection: its socket, its session, its buffers; not the CLI's, a
 * process of its own), and whose CPU is read over `turns` warm turns spread
 * over those connections (the relay's cost per turn). Each round starts a
 * new relay; the figures are the medians of the rounds.
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { sleep } from "./_pool_bench.ts";
import { cpuMsOf, type Figure, figure, memoryOf, progress } from "./_capacity_proc.ts";

/** Parameters of {@linkcode measureRelay}. */
export interface RelayParams {
  readonly rounds: number;
  /** Connections open at once. */
  readonly connections: number;
  /** Warm turns in all, spread over the connections. */
  readonly turns: number;
  /** The stand-in CLI's path. */
  readonly standIn: string;
  /** Whether the relay mirrors to a store (in memory), as a relay of a fleet does. */
  readonly store: boolean;
}

const CHILD = decodeURIComponent(new URL("./_capacity_relay_child.ts", import.meta.url).pathname);
const LISTEN_MS = 30_000;

/* Opens `count` conversations through the relay, four at a time, each with one turn. */
async function openMany(url: string, token: string, count: number): Promise<DuplexSession[]> {
  const opened: DuplexSession[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const session = await DuplexSession.start({ transport: remote({ url, token }) });
      opened.push(session);
      await session.send(`first turn of connection ${i}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 4 }, worker));
  } catch (error) {
    for (const session of opened) await session.close();
    throw error;
  }
  return opened;
}

async function round(
  params: RelayParams,
  root: string,
): Promise<{ base: number; perConn: number; cpu: number }> {
  const token = crypto.randomUUID();
  const workspace = await Deno.makeTempDir({ dir: root });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CHILD],
    env: {
      CAPACITY_RELAY: JSON.stringify({
        token,
        workspace,
        maxSessions: params.connections + 4,
        standIn: params.standIn,
        configDir: workspace,
        store: params.store,
      }),
    },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const sessions: DuplexSession[] = [];
  try {
    const timer = setTimeout(() => child.kill("SIGKILL"), LISTEN_MS);
    let first = "";
    while (!first.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) throw new Error("The capacity relay ended before it listened");
      first += value;
    }
    clearTimeout(timer);
    const url = JSON.parse(first).url as string;
    // One conversation opened and closed first, so that the code a connection runs is loaded.
    for (const session of await openMany(url, token, 2)) await session.close();
    await sleep(500);
    const before = memoryOf(child.pid).rss;
    sessions.push(...await openMany(url, token, params.connections));
    await sleep(500);
    const after = memoryOf(child.pid).rss;
    const cpu = cpuMsOf(child.pid);
    const each = Math.ceil(params.turns / sessions.length);
    await Promise.all(sessions.map(async (session, i) => {
      for (let n = 0; n < each; n++) {
        const turn = await session.send(`turn ${n} of connection ${i}`);
        if (turn.result.isError) throw new Error(`Cannot run the turn: ${turn.result.text}`);
      }
    }));
    const perTurn = (cpuMsOf(child.pid) - cpu) / (each * sessions.length);
    return { base: before, perConn: ((after - before) * 1024) / params.connections, cpu: perTurn };
  } finally {
    for (const session of sessions) await session.close();
    child.kill("SIGTERM");
    const late = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await child.status;
    clearTimeout(late);
    await reader.cancel().catch(() => {});
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
}

/**
 * Measures a relay.
 *
 * @param params The sizes.
 * @returns The figures.
 */
export async function measureRelay(params: RelayParams): Promise<Figure[]> {
  const root = await Deno.makeTempDir({ prefix: "duplex-capacity-relay-" });
  const perConn: number[] = [];
  const cpu: number[] = [];
  const base: number[] = [];
  try {
    for (let i = 0; i < params.rounds; i++) {
      const got = await round(params, root);
      perConn.push(got.perConn);
      cpu.push(got.cpu);
      base.push(got.base);
      progress(
        `relay round ${i + 1}/${params.rounds}: ${got.perConn.toFixed(0)} KiB per connection, ` +
          `${got.cpu.toFixed(3)} ms CPU per turn`,
      );
    }
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
  return [
    figure("relayBaseMb", "relay: RSS with no connection (after a first one)", "MiB", base),
    figure(
      "relayConnKib",
      `relay: RSS per open connection (over ${params.connections})`,
      "KiB",
      perConn,
    ),
    figure(
      "relayTurnCpuMs",
      `relay: CPU per turn (relay process${
        params.store ? ", mirroring to a store in memory" : ""
      })`,
      "ms",
      cpu,
    ),
  ];
}
