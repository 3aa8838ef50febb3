// deno-lint-ignore-file no-console
/**
 * The ACP bench: our agent program (`adapters/acp/main.ts`) and
 * `@zed-industries/claude-agent-acp` (the anchor, `.ci/install_acp.ts`), side
 * by side in one run, each spawned as an editor spawns it and driven over
 * stdio by the same client (`tests/e2e/_acp_client.ts`), on the real CLI
 * offline (the e2e tests' fake API, which answers at once: what is measured
 * is the agents' own cost). Rounds alternate which agent goes first; each
 * round spawns the agent, opens a session, sends a first prompt and then
 * `--prompts` warm ones, and closes it. Prints one table:
 *
 * - 10a: spawn of the agent to `session/new` answered (a session ready).
 * - 10b: the first prompt: sent to its first `agent_message_chunk`.
 * - 10c: a warm prompt: sent to its first `agent_message_chunk`.
 * - 10d: a warm prompt: sent to its answer (`stopReason`).
 * - 10e: peak RSS of the agent process alone, and 10f of the agent with its
 *   CLI and everything else it started (sampled with `ps` every 50 ms).
 *
 * ```sh
 * deno run -P=bench tests/bench/acp_bench.ts                   # 5 rounds, 10 warm prompts each
 * deno run -P=bench tests/bench/acp_bench.ts --rounds=2 --prompts=3
 * ```
 *
 * Needs the real CLI (`deno run -P=install .ci/install_claude.ts`) and the
 * anchor (`deno run -P=install .ci/install_acp.ts`); says which is missing.
 *
 * @module
 */

import { methods } from "@agentclientprotocol/sdk";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import {
  AGENT_MARK,
  type AgentKind,
  spawnAgent,
  type SpawnedAgent,
  zedAgentMissing,
} from "../e2e/_acp_client.ts";
import { median, ms, option, printTable, quantile } from "./_measure.ts";

/** What one agent measured over the rounds. */
interface Sample {
  ready: number[];
  firstChunkCold: number[];
  firstChunkWarm: number[];
  prompt: number[];
  /** Per round: the median of its warm prompts' first chunks, and of its prompts. */
  warmChunkByRound: number[];
  promptByRound: number[];
  agentRssMb: number[];
  totalRssMb: number[];
}

/* Samples the RSS of the agent and of every process carrying its marker, until stopped. */
function rssSampler(agent: SpawnedAgent): { stop(): Promise<{ agent: number; total: number }> } {
  let peakAgent = 0;
  let peakTotal = 0;
  let running = true;
  const entry = ` ${AGENT_MARK}=${agent.mark} `;
  const loop = (async () => {
    while (running) {
      const output = await new Deno.Command("ps", {
        args: ["-e", "-ww", "-o", "pid=,rss=,args=", "e"],
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      let total = 0;
      for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
        const match = /^\s*(\d+)\s+(\d+)\s(.*)$/.exec(line);
        if (!match || !`${match[3]} `.includes(entry)) continue;
        const kb = Number(match[2]);
        total += kb;
        if (Number(match[1]) === agent.child.pid) peakAgent = Math.max(peakAgent, kb);
      }
      peakTotal = Math.max(peakTotal, total);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { agent: peakAgent / 1024, total: peakTotal / 1024 };
    },
  };
}

async function timedPrompt(
  agent: SpawnedAgent,
  sessionId: string,
  text: string,
): Promise<{ firstChunk: number; total: number }> {
  const from = agent.client.updates.length;
  const started = performance.now();
  const chunk = agent.client.waitFor(
    (n) =>
      agent.client.updates.indexOf(n) >= from && n.sessionId === sessionId &&
      n.update.sessionUpdate === "agent_message_chunk",
    30_000,
  );
  const { stopReason } = await agent.client.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  const total = performance.now() - started;
  if (stopReason !== "end_turn") throw new Error(`${agent.kind}: the prompt ended ${stopReason}`);
  const first = await chunk;
  const at = agent.client.arrivals.get(first) ?? performance.now();
  return { firstChunk: at - started, total };
}

async function round(
  kind: AgentKind,
  cli: string,
  prompts: number,
  sample: Sample,
): Promise<void> {
  const api = await startFakeApi();
  const root = await Deno.makeTempDir({ prefix: "duplex-acp-bench-" });
  const home = `${root}/home`;
  const work = `${root}/work`;
  await Deno.mkdir(home);
  await Deno.mkdir(work);
  const started = performance.now();
  const agent = spawnAgent(kind, {
    cli,
    env: sandboxEnv(api, home),
    cwd: work,
    graceMs: kind === "duplex" ? 5_000 : 1_000,
  });
  const rss = rssSampler(agent);
  try {
    await agent.client.initialize();
    const { sessionId } = await agent.client.agent.request(methods.agent.session.new, {
      cwd: work,
      mcpServers: [],
    });
    sample.ready.push(performance.now() - started);
    sample.firstChunkCold.push((await timedPrompt(agent, sessionId, "first")).firstChunk);
    const chunks: number[] = [];
    const totals: number[] = [];
    for (let i = 0; i < prompts; i++) {
      const { firstChunk, total } = await timedPrompt(agent, sessionId, `warm ${i}`);
      chunks.push(firstChunk);
      totals.push(total);
    }
    sample.firstChunkWarm.push(...chunks);
    sample.prompt.push(...totals);
    sample.warmChunkByRound.push(median(chunks));
    sample.promptByRound.push(median(totals));
  } finally {
    const peak = await rss.stop();
    sample.agentRssMb.push(peak.agent);
    sample.totalRssMb.push(peak.total);
    const { killed } = await agent.close();
    if (killed.length > 0) console.error(`!! ${kind} left ${killed.length} process(es): killed`);
    await api.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

const cli = cliPath();
const missing = zedAgentMissing();
if (!cli.available || missing) {
  console.error(`!! Cannot run the ACP bench: ${cli.available ? missing : cli.reason}`);
  Deno.exit(1);
}
const rounds = option("rounds", 5);
const prompts = option("prompts", 10);
const empty = (): Sample => ({
  ready: [],
  firstChunkCold: [],
  firstChunkWarm: [],
  prompt: [],
  warmChunkByRound: [],
  promptByRound: [],
  agentRssMb: [],
  totalRssMb: [],
});
const samples: Record<AgentKind, Sample> = { duplex: empty(), "claude-agent-acp": empty() };
const loadavg = async (): Promise<string> => {
  const output = await new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" })
    .output().catch(() => undefined);
  return output ? new TextDecoder().decode(output.stdout).split(" ")[0] ?? "?" : "?";
};
const load = await loadavg();
for (let r = 0; r < rounds; r++) {
  const order: AgentKind[] = r % 2 === 0
    ? ["duplex", "claude-agent-acp"]
    : ["claude-agent-acp", "duplex"];
  for (const kind of order) await round(kind, cli.path, prompts, samples[kind]);
}

const ours = samples.duplex;
const theirs = samples["claude-agent-acp"];
/* The median of each round's ratio: both agents ran in the same round, so load drift cancels. */
const paired = (a: number[], b: number[]): string =>
  `${median(a.map((value, i) => value / b[i]!)).toFixed(2)}x`;
type Field = keyof Sample;
/* Each row: its id, what it measures, its unit, its samples, and the per-round ones if they differ. */
const specs: [string, string, "ms" | "MiB", Field, Field?][] = [
  ["10a", `spawn -> session/new answered (median of ${rounds})`, "ms", "ready"],
  [
    "10b",
    `first prompt -> first agent_message_chunk (median of ${rounds})`,
    "ms",
    "firstChunkCold",
  ],
  [
    "10c",
    `warm prompt -> first agent_message_chunk (median of ${rounds * prompts})`,
    "ms",
    "firstChunkWarm",
    "warmChunkByRound",
  ],
  [
    "10d",
    `warm prompt -> its answer (median of ${rounds * prompts})`,
    "ms",
    "prompt",
    "promptByRound",
  ],
  ["10e", `peak RSS of the agent process (median of ${rounds})`, "MiB", "agentRssMb"],
  ["10f", `peak RSS of the agent + its CLI (median of ${rounds})`, "MiB", "totalRssMb"],
];
const cell = (values: number[], unit: "ms" | "MiB"): string =>
  unit === "ms"
    ? `${ms(median(values))} (p90 ${ms(quantile(values, 0.9))})`
    : `${median(values).toFixed(0)} MiB (max ${Math.max(...values).toFixed(0)})`;
const rows = [
  [
    "#",
    "workload",
    "ours (adapters/acp)",
    "claude-agent-acp 0.23.1",
    "ratio",
    "paired ratio (median of rounds)",
  ],
  ...specs.map(([id, what, unit, field, byRound]) => [
    id,
    what,
    cell(ours[field], unit),
    cell(theirs[field], unit),
    `${(median(ours[field]) / median(theirs[field])).toFixed(2)}x`,
    paired(ours[byRound ?? field], theirs[byRound ?? field]),
  ]),
];
console.log(
  `ACP bench: ${rounds} rounds x ${prompts} warm prompts, CLI ${cli.path}, ` +
    `1-min load ${load} at the start, ${await loadavg()} at the end`,
);
printTable(rows);
