// deno-lint-ignore-file no-console
/**
 * Where a warm spare's first turn goes, against a warm turn: a diagnostic
 * for row 8b, not a row. Starts the real CLI (offline, the fake Messages
 * API in this process) with `initialize` sent, waits 2 s, runs a first and
 * a second turn, and reads the CLI's own debug log (`--debug-file`) for the
 * time from the user line to `[engine] turn N start`, from there to
 * `[API REQUEST]`, the API's first byte, and the end of the turn.
 *
 * ```sh
 * deno run -P=bench tests/bench/first_turn_phases.ts [samples]
 * ```
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import { median } from "./_measure.ts";
import { echoTurn, sleep } from "./_pool_bench.ts";

type Phases = { toEngine: number; toRequest: number; firstByte: number; total: number };

/** Reads one turn's phases from the debug log lines written after `sentAt`. */
function phases(lines: readonly string[], turn: number, sentAt: number, total: number): Phases {
  const at = (pattern: string): number => {
    const line = lines.find((l) => l.includes(pattern) && Date.parse(l.slice(0, 24)) >= sentAt);
    if (!line) throw new Error(`Cannot find "${pattern}" in the CLI's debug log`);
    return Date.parse(line.slice(0, 24));
  };
  const engine = at(`[engine] turn ${turn} start`);
  const request = lines.find((l) =>
    l.includes("[API REQUEST]") && Date.parse(l.slice(0, 24)) >= engine
  );
  const byte = lines.find((l) =>
    l.includes("first byte after") && Date.parse(l.slice(0, 24)) >= engine
  );
  return {
    toEngine: engine - sentAt,
    toRequest: Date.parse(request?.slice(0, 24) ?? "") - engine,
    firstByte: Number(byte?.match(/first byte after (\d+)ms/)?.[1]),
    total,
  };
}

if (import.meta.main) {
  const samples = Number(Deno.args[0] ?? 5);
  const cli = cliPath();
  if (!cli.available) throw new Error(`Cannot run: ${cli.reason}`);
  const temp = await Deno.makeTempDir({ prefix: "duplex-phases-" });
  await using api = await startFakeApi();
  const all: Record<"first" | "warm", Phases[]> = { first: [], warm: [] };
  try {
    for (const dir of ["home", "work"]) await Deno.mkdir(`${temp}/${dir}`);
    for (let i = 0; i < samples; i++) {
      const log = `${temp}/debug-${i}.log`;
      const session = await DuplexSession.start({
        initialize: true,
        transport: subprocess({
          pathToClaudeCodeExecutable: cli.path,
          env: sandboxEnv(api, `${temp}/home`),
          clearEnv: true,
          cwd: `${temp}/work`,
          debugFile: log,
        }),
      });
      const sent: number[] = [];
      const totals: number[] = [];
      try {
        await session.initialized;
        await sleep(2000);
        for (const turn of [1, 2]) {
          sent.push(Date.now());
          const start = performance.now();
          await echoTurn(session, `turn ${turn} of ${i}`);
          totals.push(performance.now() - start);
        }
      } finally {
        await session.close();
      }
      const lines = (await Deno.readTextFile(log)).split("\n");
      all.first.push(phases(lines, 1, sent[0] as number, totals[0] as number));
      all.warm.push(phases(lines, 2, sent[1] as number, totals[1] as number));
    }
  } finally {
    await Deno.remove(temp, { recursive: true }).catch(() => {});
  }
  for (const [name, list] of Object.entries(all)) {
    const m = (key: keyof Phases): string => median(list.map((p) => p[key])).toFixed(0);
    console.log(
      `${name}: line to engine start ${m("toEngine")} ms, engine start to API request ` +
        `${m("toRequest")} ms, API first byte ${m("firstByte")} ms, send to result ${
          m("total")
        } ms`,
    );
  }
}
