// deno-lint-ignore-file no-console
/**
 * `deno task soak`: the fleet soak with chaos (issue 26). Three relay
 * processes behind HAProxy (`examples/relay/haproxy.cfg`), one PostgreSQL
 * store, many conversations at once through `remote({ url })`, and faults on
 * a schedule: a relay SIGKILLed mid-turn, a relay SIGSTOPped and SIGCONTed,
 * PostgreSQL stopped and restarted, client connections cut mid-stream
 * (HAProxy's `shutdown session`), a relay taken out and back through
 * HAProxy's runtime API, CLIs SIGKILLed under live conversations, a burst
 * of new conversations beyond every limit. Prints the table; exits 1 when a
 * turn was lost or duplicated, a transcript differs or something was left.
 *
 * Flags: `--short` (a few minutes), `--real-cli` (the real CLI against the
 * fake Messages API), `--conversations=N`, `--turns=N` (each),
 * `--concurrency=N`, `--burst=N`, `--no-faults`, `--faults=relay_sigstop,…` (only those),
 * `--json` (the report as JSON too).
 *
 * @module
 */

import { type FaultName, runSoak, type SoakOptions, type SoakReport } from "./_soak_run.ts";

/** The sizes of each kind of run. */
export const SIZES: Record<string, Omit<SoakOptions, "log">> = {
  full: { cli: "stand-in", conversations: 1000, turns: 20, concurrency: 40, burst: 150 },
  short: { cli: "stand-in", conversations: 120, turns: 8, concurrency: 24, burst: 80 },
  real: { cli: "real", conversations: 24, turns: 10, concurrency: 6, burst: 30 },
  realShort: { cli: "real", conversations: 8, turns: 5, concurrency: 4, burst: 20 },
};

function ms(value: number | undefined): string {
  return value === undefined || Number.isNaN(value) ? "-" : `${Math.round(value)} ms`;
}

/**
 * Whether a report passes: 0 lost, 0 duplicated, transcripts equal, nothing left.
 *
 * @param report The soak's report.
 * @returns The failed checks (empty: it passes).
 */
export function failures(report: SoakReport): string[] {
  const failed: string[] = [];
  if (report.lost > 0) failed.push(`${report.lost} turns lost`);
  if (report.duplicated > 0) failed.push(`${report.duplicated} turns duplicated`);
  if (report.doubledInCli > 0) failed.push(`${report.doubledInCli} turns run twice by a CLI`);
  if (report.transcriptsDiffering.length > 0) {
    failed.push(`${report.transcriptsDiffering.length} transcripts differ`);
  }
  if (report.conversationsDone !== report.options.conversations) {
    failed.push(`${report.conversationsDone}/${report.options.conversations} conversations ended`);
  }
  if (report.abandoned.length > 0) {
    failed.push(
      `${report.abandoned.length} conversations abandoned: ${report.abandoned.join("; ")}`,
    );
  }
  if (report.relaysDied.length > 0) {
    failed.push(`relays ended by themselves: ${report.relaysDied.join("; ")}`);
  }
  if (report.leftProcesses.length > 0) failed.push(`${report.leftProcesses.length} processes left`);
  if (report.leftPorts.length > 0) failed.push(`ports left listening: ${report.leftPorts}`);
  if (report.leftFds.length > 0) failed.push(`sockets left: ${report.leftFds}`);
  return failed;
}

/**
 * The report as a Markdown table (rows `K1`, `K2`, …).
 *
 * @param report The soak's report.
 * @returns The table's lines.
 */
export function table(report: SoakReport): string[] {
  const o = report.options;
  const rows: [string, string][] = [
    [
      "size",
      `${o.cli}: ${o.conversations} conversations x ${o.turns} turns, ${o.concurrency} at once, 3 relays`,
    ],
    ["turns sent", String(report.turnsSent)],
    ["delivered exactly once", String(report.delivered)],
    ["delivered as an error result", String(report.errorResults)],
    [
      "failed with a typed error",
      `${report.failedTyped} (${
        Object.entries(report.failedKinds).map(([k, n]) => `${k} ${n}`).join(", ") || "none"
      })`,
    ],
    [
      "lost / duplicated / run twice by a CLI",
      `${report.lost} / ${report.duplicated} / ${report.doubledInCli}`,
    ],
    [
      "turns run again on resume after their CLI was killed / stores short of a killed CLI's tail",
      `${report.rerunAfterKill} / ${report.tailLostWithKill}`,
    ],
    ["turns delivered but missing from the store's history", `${report.deliveredForgotten}`],
    [
      "store transcript = CLI's, by uuid, in order",
      `${
        report.transcriptsChecked - report.transcriptsDiffering.length
      }/${report.transcriptsChecked}`,
    ],
    ["turns/s (wall)", report.turnsPerSec.toFixed(1)],
    ...Object.entries(report.latency).map(([name, l]): [string, string] => [
      `latency p50 / p99, ${name}`,
      `${ms(l.p50)} / ${ms(l.p99)} (n=${l.n})`,
    ]),
    ...report.faults.map((f): [string, string] => [
      `fault ${f.name}`,
      `${f.note}; ${ms(f.ms)}${
        f.recoveredMs === undefined
          ? ""
          : `; next result through another relay ${ms(f.recoveredMs)}`
      }`,
    ]),
    ["conversations resumed (spawn.resume)", String(report.conversationsResumed)],
    [
      "starts refused, retried; conversations abandoned",
      `${
        Object.entries(report.startsRefused).map(([k, n]) => `${k} ${n}`).join(", ") || "none"
      }; ${report.abandoned.length} abandoned`,
    ],
    [
      "burst beyond the limits",
      Object.entries(report.burst).map(([k, n]) => `${k} x${n}`).join("; ") || "-",
    ],
    ...report.relayRss.map((r): [string, string] => [
      `${r.name} RSS first / peak / last`,
      `${r.firstMib.toFixed(0)} / ${r.peakMib.toFixed(0)} / ${r.lastMib.toFixed(0)} MiB`,
    ]),
    [
      "relay RSS per live conversation",
      report.relayKibPerSession === undefined ? "-" : `${report.relayKibPerSession.toFixed(0)} KiB`,
    ],
    [
      "store rows per turn (transcript + record)",
      `${report.storeRowsPerTurn.toFixed(2)} + ${report.recordRowsPerTurn.toFixed(2)}`,
    ],
    ["store rows/s", report.storeRowsPerSec.toFixed(0)],
    [
      "left: processes / listening ports / connected sockets / relay temp entries",
      `${report.leftProcesses.length} / ${report.leftPorts.length} / ${report.leftFds.length} / ${report.leftTempEntries.length}`,
    ],
  ];
  return [
    "| id | what | figure |",
    "| --- | --- | --- |",
    ...rows.map(([what, value], i) => `| K${i + 1} | ${what} | ${value} |`),
  ];
}

if (import.meta.main) {
  const flags: Record<string, string | boolean | undefined> = {};
  for (const arg of Deno.args) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`Cannot read the flag ${arg}: want --name or --name=value`);
    flags[match[1]!] = match[2] ?? true;
  }
  const base = SIZES[
    flags["real-cli"] ? (flags.short ? "realShort" : "real") : flags.short ? "short" : "full"
  ]!;
  const size = (name: "conversations" | "turns" | "concurrency" | "burst") =>
    flags[name] === undefined ? base[name] : Number(flags[name]);
  const options: SoakOptions = {
    ...base,
    conversations: size("conversations"),
    turns: size("turns"),
    concurrency: size("concurrency"),
    burst: size("burst"),
    faults: !flags["no-faults"],
    ...(typeof flags.faults === "string"
      ? { only: flags.faults.split(",").map((name) => name as FaultName) }
      : {}),
    log: (line) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`),
  };
  const report = await runSoak(options);
  console.log(table(report).join("\n"));
  if (report.transcriptsDiffering.length > 0) {
    console.log(`\ndiffering: ${report.transcriptsDiffering.slice(0, 10).join("; ")}`);
  }
  if (report.leftProcesses.length > 0) console.log(`\nleft: ${report.leftProcesses.join("; ")}`);
  if (report.leftTempEntries.length > 0) {
    console.log(`\nrelay temp entries left: ${report.leftTempEntries.join(", ")}`);
  }
  if (flags.json) console.log(JSON.stringify(report));
  const failed = failures(report);
  if (failed.length > 0) {
    console.error(`\nSOAK FAILED: ${failed.join("; ")}`);
    Deno.exit(1);
  }
  console.error("\nsoak passed: 0 lost, 0 duplicated, transcripts equal, nothing left");
}
