/**
 * The fleet soak with chaos (issue 26): three relay processes behind
 * HAProxy (the shipped configuration), one PostgreSQL store, clients driving
 * many conversations at once through `remote({ url })`, faults on a
 * schedule, and the checks: every turn delivered exactly once or failed
 * with a typed error the client saw, every conversation's store transcript
 * equal to what its CLI wrote, nothing left, each relay's memory bounded.
 * {@linkcode runSoak} runs it and returns the report; `soak.ts` prints it.
 *
 * @module
 */

import postgres from "postgres";
import { DuplexSession } from "../../mod.ts";
import { LOST_TERMINAL_REASON, remote } from "../../adapters/remote/mod.ts";
import { sleep } from "../../src/_deadline.ts";
import { messageOf } from "../../src/_values.ts";
import { isDuplexError } from "../../src/errors.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";
import { startPostgres } from "../stores/_postgres_server.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import {
  listeningPorts,
  processes,
  sessionOfCmdline,
  type SoakBalancer,
  type SoakRelay,
  soakRelay,
  startBalancer,
} from "./_fleet.ts";

const STAND_IN = decodeURIComponent(new URL("./_soak_cli.ts", import.meta.url).pathname);
const PROJECT_KEY = "soak";
const TOKEN = crypto.randomUUID();

/** The faults the soak injects, in the order it injects them. */
export const FAULTS = [
  "relay_sigkill",
  "relay_sigstop",
  "postgres_restart",
  "client_cut",
  "haproxy_maint",
  "cli_sigkill",
  "burst",
] as const;
/** One of {@linkcode FAULTS}. */
export type FaultName = typeof FAULTS[number];

/** What a soak runs. */
export interface SoakOptions {
  /** The stand-in CLI (`_soak_cli.ts`) or the real one against the fake Messages API. */
  readonly cli: "stand-in" | "real";
  /** Conversations in all. */
  readonly conversations: number;
  /** Turns of each. */
  readonly turns: number;
  /** Conversations live at once. */
  readonly concurrency: number;
  /** New conversations started at once by the burst fault. */
  readonly burst: number;
  /** Inject the faults (default true). */
  readonly faults?: boolean;
  /** Only these faults (default: every one of {@linkcode FAULTS}). */
  readonly only?: readonly FaultName[];
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

/** One turn as the client saw it. */
interface TurnRecord {
  readonly conversation: number;
  readonly uuid: string;
  readonly start: number;
  end: number;
  outcome: "delivered" | "error_result" | "failed" | "lost";
  kind?: string;
  /** `result` frames seen by the session's subscriber for this uuid. */
  results: number;
}

/** A fault as injected. */
interface FaultRecord {
  readonly name: FaultName;
  readonly start: number;
  end: number;
  note: string;
  /** For relay_sigkill: the CLI sessions on the killed relay, and the first result among them after. */
  sessions?: Set<string>;
  recoveredMs?: number;
}

/** How long a conversation's start (or resume) is retried before it is abandoned. */
const GIVE_UP_MS = 120_000;

/** The soak's figures and checks. */
export interface SoakReport {
  readonly options: SoakOptions;
  readonly seconds: number;
  readonly turnsSent: number;
  readonly delivered: number;
  readonly errorResults: number;
  readonly failedTyped: number;
  readonly failedKinds: Record<string, number>;
  readonly lost: number;
  readonly duplicated: number;
  /** Turns whose user line a CLI wrote more than once (across processes). */
  readonly doubledInCli: number;
  /** Turns a CLI ran again on resume because the one that ran them first was killed before its write reached the store. */
  readonly rerunAfterKill: number;
  /** Conversations whose last CLI was killed and whose store lacks what it wrote after its last append (no delivered turn). */
  readonly tailLostWithKill: number;
  /** Turns whose result the client had, missing from every store transcript of their conversation (its history forgot them). */
  readonly deliveredForgotten: number;
  readonly conversationsDone: number;
  /** Conversations given up: no session started or resumed within `GIVE_UP_MS` (why, each). */
  readonly abandoned: string[];
  readonly conversationsResumed: number;
  readonly startsRefused: Record<string, number>;
  readonly transcriptsChecked: number;
  readonly transcriptsDiffering: string[];
  readonly turnsPerSec: number;
  readonly latency: Record<string, { n: number; p50: number; p99: number }>;
  readonly faults: { name: string; ms: number; note: string; recoveredMs?: number }[];
  readonly burst: Record<string, number>;
  readonly relayRss: { name: string; firstMib: number; peakMib: number; lastMib: number }[];
  readonly relayKibPerSession: number | undefined;
  readonly storeRowsPerTurn: number;
  readonly recordRowsPerTurn: number;
  readonly storeRowsPerSec: number;
  readonly leftProcesses: string[];
  readonly leftPorts: number[];
  readonly leftTempEntries: string[];
  readonly leftFds: string[];
  /** Relays that ended without the soak killing or stopping them (each with its stderr's end). */
  readonly relaysDied: string[];
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/* Open file descriptors of this process (`ls`: Deno grants /proc/self only with -A). */
function ownSockets(): string[] {
  // This process's TCP and unix stream sockets that are connected (`ss`; /proc needs -A).
  const output = new Deno.Command("ss", { args: ["-tanpH"], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(output.stdout).split("\n")
    .filter((line) => line.includes(`pid=${Deno.pid},`) && !line.startsWith("LISTEN"));
}

function kindOf(error: unknown): string {
  if (isDuplexError(error)) return error.kind;
  return `untyped:${error instanceof Error ? error.name : typeof error}`;
}

function resultUuids(event: unknown): string[] {
  const frame = event as { type?: string; user_message_uuids?: unknown };
  if (frame.type !== "result" || !Array.isArray(frame.user_message_uuids)) return [];
  return frame.user_message_uuids.filter((uuid): uuid is string => typeof uuid === "string");
}

/** What one stand-in process loaded (the transcript it resumed) and wrote. */
interface Journal {
  readonly pid: number;
  readonly loaded: string[];
  readonly written: string[];
}

/** Reads the journals of the stand-in: per CLI session, each process's loaded and written uuids. */
async function readJournals(dir: string): Promise<
  Map<string, Journal[]>
> {
  const journals = new Map<string, Journal[]>();
  for await (const session of Deno.readDir(dir)) {
    const files: string[] = [];
    for await (const file of Deno.readDir(`${dir}/${session.name}`)) files.push(file.name);
    files.sort();
    const list = [];
    for (const file of files) {
      const lines = (await Deno.readTextFile(`${dir}/${session.name}/${file}`)).split("\n")
        .filter((line) => line.trim() !== "").flatMap((line) => {
          try {
            return [JSON.parse(line)];
          } catch {
            return []; // torn by a SIGKILL
          }
        });
      const loaded = (lines[0]?.loaded ?? []) as string[];
      const pid = Number(lines[0]?.pid);
      list.push({ pid, loaded, written: lines.slice(1).map((line) => line.uuid as string) });
    }
    journals.set(session.name, list);
  }
  return journals;
}

/** The newest local transcript of a CLI session under a folder (the real CLI's). */
async function newestTranscript(root: string, sessionId: string): Promise<string[] | undefined> {
  let best: { mtime: number; path: string } | undefined;
  async function walk(dir: string, depth: number): Promise<void> {
    if (depth > 8) return;
    try {
      for await (const entry of Deno.readDir(dir)) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory) await walk(path, depth + 1);
        else if (entry.name === `${sessionId}.jsonl`) {
          const mtime = (await Deno.stat(path)).mtime?.getTime() ?? 0;
          if (!best || mtime > best.mtime) best = { mtime, path };
        }
      }
    } catch { /* removed meanwhile */ }
  }
  await walk(root, 0);
  if (!best) return undefined;
  return (await Deno.readTextFile(best.path)).split("\n").flatMap((line) => {
    try {
      const uuid = line.trim() ? JSON.parse(line).uuid : undefined;
      return typeof uuid === "string" ? [uuid] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Runs a soak.
 *
 * @param options Its size and CLI.
 * @returns The report (the caller judges it).
 */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => {});
  const injecting = options.faults !== false;
  const socketsBefore = new Set(ownSockets());
  const root = await Deno.makeTempDir({ prefix: "duplex-soak-" });
  const journal = `${root}/journal`;
  const work = `${root}/work`;
  await Deno.mkdir(journal);
  await Deno.mkdir(work);
  const seenPids = new Set<number>();
  const relayPgids: number[] = [];
  const ports: number[] = [];
  let report: SoakReport | undefined;
  const pg = await startPostgres();
  ports.push(pg.port);
  const api = options.cli === "real" ? await startFakeApi() : undefined;
  const sql = postgres(pg.url, {
    onnotice: () => {},
    max: 2,
    connect_timeout: 3,
    backoff: (retries: number) => Math.min(3 ** retries / 100, 0.5),
  });
  const relays: SoakRelay[] = [];
  let balancer: SoakBalancer | undefined;
  try {
    const concurrency = options.concurrency;
    let binary = Deno.execPath();
    let binaryArgs = ["run", "-A", "--no-config", "--quiet", STAND_IN];
    if (options.cli === "real") {
      const cli = cliPath();
      if (!cli.available) throw new Error(`Cannot run the real-CLI soak: ${cli.reason}`);
      binary = cli.path;
      binaryArgs = [];
    }
    for (let i = 1; i <= 3; i++) {
      const home = `${root}/relay${i}/home`;
      await Deno.mkdir(home, { recursive: true });
      const env: Record<string, string> = api ? sandboxEnv(api, home) : {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        SOAK_JOURNAL: journal,
        NO_COLOR: "1",
        DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      };
      relays.push(soakRelay(`relay${i}`, {
        token: TOKEN,
        workspace: work,
        postgresUrl: pg.url,
        projectKey: PROJECT_KEY,
        binary,
        binaryArgs,
        env,
        tempDir: `${root}/relay${i}`,
        // Two relays carry every live conversation while the third is down.
        maxSessions: Math.ceil(concurrency / 2) + 8,
        graceMs: 10_000,
        maxPendingConnections: 256,
        catchUpDelayMs: 300,
      }));
    }
    await Promise.all(relays.map((relay) => relay.start()));
    for (const relay of relays) ports.push(relay.port);
    balancer = await startBalancer(relays, root, {
      sourceConnections: concurrency * 2 + 20,
      sourceRate: 100_000,
      sourceRequestRate: 100_000,
    });
    ports.push(balancer.port);
    const lb = balancer;

    // Samplers: every relay's RSS and session count; every CLI the relays run.
    const rss = new Map<string, { t: number; mib: number; sessions: number }[]>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await sleep(500);
        const list = processes();
        const pgids = new Set(relays.flatMap((relay) => relay.pids));
        for (const proc of list) {
          if (pgids.has(proc.ppid) || pgids.has(proc.pgid)) seenPids.add(proc.pid);
        }
        for (const relay of relays) {
          const pid = relay.pid;
          if (pid === undefined) continue;
          const mib = list.find((proc) => proc.pid === pid)?.rssMib;
          const sessions = list.filter((proc) => proc.ppid === pid).length;
          if (mib !== undefined) {
            const series = rss.get(relay.name) ?? [];
            series.push({ t: performance.now(), mib, sessions });
            rss.set(relay.name, series);
          }
        }
      }
    })().catch((error) => log(`the sampler failed: ${error}`));
    // With SOAK_DEBUG: each change of a relay's state as HAProxy sees it (UP, DOWN, MAINT).
    const watcher = Deno.env.get("SOAK_DEBUG")
      ? (async () => {
        const states = new Map<string, string>();
        while (sampling) {
          await sleep(250);
          const csv = await lb.command("show stat").catch(() => "");
          for (const row of csv.split("\n")) {
            const cells = row.split(",");
            if (cells[0] !== "relays" || !cells[1]?.startsWith("relay")) continue;
            const status = cells[17] ?? "?";
            if (states.get(cells[1]) !== status) log(`haproxy: ${cells[1]} ${status}`);
            states.set(cells[1], status);
          }
        }
      })().catch((error) => log(`the watcher failed: ${error}`))
      : Promise.resolve();

    const turns: TurnRecord[] = [];
    const faults: FaultRecord[] = [];
    const startsRefused: Record<string, number> = {};
    const abandoned: string[] = [];
    const failedKinds: Record<string, number> = {};
    const cliSessions = new Map<number, Set<string>>();
    // CLIs SIGKILLed, or whose relay was: what they wrote after their last append is gone.
    const killedPids = new Set<number>();
    const resultsByUuid = new Map<string, number>();
    let resumed = 0;
    let done = 0;
    let completedTurns = 0;
    const totalTurns = options.conversations * options.turns;
    const sendTimeoutMs = options.cli === "real" ? 90_000 : 20_000;
    const began = performance.now();

    const open = async (conversation: number, resume?: string): Promise<DuplexSession> => {
      const deadline = Date.now() + GIVE_UP_MS;
      for (let attempt = 0;; attempt++) {
        try {
          return await DuplexSession.start({
            transport: remote({
              url: lb.urlFor(`c${conversation}`),
              token: TOKEN,
              heartbeatMs: 2_000,
              reconnect: { attempts: 40, initialDelayMs: 100, maxDelayMs: 1_000 },
              ...(resume === undefined ? {} : { spawn: { resume } }),
            }),
            signal: AbortSignal.timeout(60_000),
          });
        } catch (error) {
          const kind = `${resume === undefined ? "start" : "resume"}:${kindOf(error)}`;
          startsRefused[kind] = (startsRefused[kind] ?? 0) + 1;
          if (Deno.env.get("SOAK_DEBUG")) {
            log(`c${conversation} ${kind}: ${messageOf(error)} resume=${resume}`);
          }
          if (Date.now() > deadline) throw error;
          await sleep(Math.min(2_000, 200 * 2 ** Math.min(attempt, 4)));
        }
      }
    };

    /** Settles once the injector is done (at once without faults). */
    const faultsDone = Promise.withResolvers<void>();
    const converse = async (conversation: number): Promise<void> => {
      let session: DuplexSession | undefined;
      let cliSession: string | undefined;
      // The session ended (its send said so before its exit status does): resume it.
      let gone = false;
      const sessions = new Set<string>();
      cliSessions.set(conversation, sessions);
      const watch = (s: DuplexSession) =>
        (async () => {
          for await (const event of s.subscribe()) {
            for (const uuid of resultUuids(event)) {
              resultsByUuid.set(uuid, (resultsByUuid.get(uuid) ?? 0) + 1);
            }
          }
        })().catch(() => {});
      const watching: Promise<void>[] = [];
      try {
        for (let n = 0; n < options.turns; n++) {
          if (session === undefined || gone || session.exitStatus.state !== "running") {
            gone = false;
            if (session !== undefined) await session.close().catch(() => {});
            if (cliSession !== undefined) resumed++;
            try {
              session = await open(conversation, cliSession);
            } catch (error) {
              // Given up: its remaining turns are never sent; the report fails on it.
              abandoned.push(
                `c${conversation} after ${n} turns: ${kindOf(error)}: ${messageOf(error)}`,
              );
              session = undefined;
              break;
            }
            watching.push(watch(session));
          }
          // The last wave keeps its last turn until every fault is in: a fast run would end
          // before the schedule's last faults (injected by progress, each lasting seconds).
          if (n === options.turns - 1 && next >= options.conversations) await faultsDone.promise;
          const uuid = crypto.randomUUID();
          const record: TurnRecord = {
            conversation,
            uuid,
            start: performance.now(),
            end: 0,
            outcome: "lost",
            results: 0,
          };
          turns.push(record);
          try {
            const turn = await session.send(`soak c${conversation} t${n}`, {
              uuid,
              timeoutMs: sendTimeoutMs,
            });
            record.outcome = turn.uuid !== uuid
              ? "lost"
              : turn.result.terminalReason === LOST_TERMINAL_REASON
              ? "failed" // its CLI went without answering: the client is told, typed
              : turn.result.isError
              ? "error_result"
              : "delivered";
            if (record.outcome === "failed") {
              record.kind = LOST_TERMINAL_REASON;
              failedKinds[record.kind] = (failedKinds[record.kind] ?? 0) + 1;
            }
            cliSession = turn.result.sessionId ?? cliSession;
            if (cliSession !== undefined) sessions.add(cliSession);
          } catch (error) {
            record.kind = kindOf(error);
            record.outcome = isDuplexError(error) ? "failed" : "lost";
            failedKinds[record.kind] = (failedKinds[record.kind] ?? 0) + 1;
            if (Deno.env.get("SOAK_DEBUG")) {
              log(
                `c${conversation} t${n} ${record.kind}: ${(error as Error).message} ` +
                  `[${session.exitStatus.state}] cli=${cliSession}`,
              );
            }
            cliSession = session.sessionId ?? cliSession;
            gone = isDuplexError(error, "process_exited") || isDuplexError(error, "closed");
          }
          record.end = performance.now();
          completedTurns++;
        }
      } finally {
        await session?.close().catch(() => {});
        await Promise.all(watching);
        done++;
      }
    };

    // The faults, by progress (bounded: one of each, each within seconds).
    const waitFor = async (fraction: number) => {
      while (completedTurns < fraction * totalTurns && done < options.conversations) {
        await sleep(100);
      }
    };
    const busiest = () => {
      const list = processes();
      let best: SoakRelay | undefined;
      let most = -1;
      for (const relay of relays) {
        const count = list.filter((proc) => proc.ppid === relay.pid).length;
        if (relay.pid !== undefined && count > most) [best, most] = [relay, count];
      }
      return best!;
    };
    const burstOutcomes: Record<string, number> = {};
    const inject = async () => {
      const plan: [number, FaultName][] = [
        [0.1, "relay_sigkill"],
        [0.22, "relay_sigstop"],
        [0.34, "postgres_restart"],
        [0.46, "client_cut"],
        [0.58, "haproxy_maint"],
        [0.7, "cli_sigkill"],
        [0.82, "burst"],
      ];
      for (const [at, name] of plan) {
        if (options.only !== undefined && !options.only.includes(name)) continue;
        await waitFor(at);
        if (done >= options.conversations) return;
        const fault: FaultRecord = { name, start: performance.now(), end: 0, note: "" };
        faults.push(fault);
        log(`fault ${name} at ${completedTurns}/${totalTurns} turns`);
        try {
          await injectOne(fault);
        } catch (error) {
          fault.note = `could not inject: ${error}`;
          log(fault.note);
        }
        fault.end = performance.now();
      }
    };
    const injectOne = async (fault: FaultRecord) => {
      switch (fault.name) {
        case "relay_sigkill": {
          const relay = busiest();
          const on = processes().filter((proc) => proc.ppid === relay.pid);
          fault.sessions = new Set(on.flatMap((proc) => sessionOfCmdline(proc.cmdline) ?? []));
          for (const proc of on) killedPids.add(proc.pid);
          await relay.kill();
          fault.note = `${relay.name}, ${on.length} CLIs`;
          await sleep(3_000);
          await relay.start();
          break;
        }
        case "relay_sigstop": {
          const relay = busiest();
          relay.signal("SIGSTOP");
          await sleep(5_000);
          relay.signal("SIGCONT");
          fault.note = `${relay.name} stopped 5 s`;
          break;
        }
        case "postgres_restart":
          await pg.stop();
          await sleep(3_000);
          await pg.start();
          fault.note = "stopped 3 s";
          break;
        case "client_cut": {
          const sessions = (await lb.command("show sess")).split("\n")
            .filter((line) => line.includes("be=relays"))
            .map((line) => line.split(":")[0]!);
          const cut = sessions.slice(0, 5);
          for (const id of cut) await lb.command(`shutdown session ${id}`);
          fault.note = `${cut.length} of ${sessions.length} connections cut`;
          break;
        }
        case "haproxy_maint": {
          const relay = busiest();
          const server = `relays/${relay.name}`;
          await lb.command(`set server ${server} state maint`);
          await sleep(1_000);
          await lb.command(`shutdown sessions server ${server}`);
          await sleep(4_000);
          await lb.command(`set server ${server} state ready`);
          fault.note = `${relay.name} out 5 s, its connections shut`;
          break;
        }
        case "cli_sigkill": {
          const pids = new Set(relays.map((relay) => relay.pid));
          const clis = processes().filter((proc) => pids.has(proc.ppid)).slice(0, 3);
          for (const cli of clis) {
            killedPids.add(cli.pid);
            try {
              Deno.kill(cli.pid, "SIGKILL");
            } catch { /* gone */ }
          }
          fault.note = `${clis.length} CLIs`;
          break;
        }
        case "burst": {
          const started: DuplexSession[] = [];
          await Promise.all(Array.from({ length: options.burst }, async (_, i) => {
            try {
              const session = await DuplexSession.start({
                transport: remote({
                  url: lb.urlFor(`burst${i}`),
                  token: TOKEN,
                  reconnect: false,
                }),
                signal: AbortSignal.timeout(30_000),
              });
              started.push(session);
              await session.send("burst", { timeoutMs: sendTimeoutMs });
              burstOutcomes.ok = (burstOutcomes.ok ?? 0) + 1;
            } catch (error) {
              const kind = `${kindOf(error)}: ${
                (error instanceof Error ? error.message : "").replace(/ws:\/\/\S+/g, "<url>").slice(
                  0,
                  200,
                )
              }`;
              const short = kind.replace(/[0-9a-f-]{36}/g, "<id>").replace(/\d+/g, "N");
              burstOutcomes[short] = (burstOutcomes[short] ?? 0) + 1;
            }
          }));
          await Promise.all(started.map((session) => session.close().catch(() => {})));
          fault.note = `${options.burst} at once`;
          break;
        }
      }
    };

    let next = 0;
    const worker = async () => {
      while (next < options.conversations) {
        const conversation = next++;
        await converse(conversation);
        if (done % 50 === 0) log(`${done}/${options.conversations} conversations`);
      }
    };
    const injector = (injecting
      ? inject().catch((error) =>
        log(`the faults stopped: ${error}`)
      )
      : Promise.resolve()).finally(() => faultsDone.resolve());
    await Promise.all(Array.from({ length: concurrency }, worker));
    await injector;
    const seconds = (performance.now() - began) / 1000;
    log(`driven in ${seconds.toFixed(1)} s; checking`);

    // Exactly once, as the client saw it.
    for (const turn of turns) turn.results = resultsByUuid.get(turn.uuid) ?? 0;
    const delivered = turns.filter((turn) => turn.outcome === "delivered").length;
    const errorResults = turns.filter((turn) => turn.outcome === "error_result").length;
    const failed = turns.filter((turn) => turn.outcome === "failed").length;
    const lost = turns.filter((turn) => turn.outcome === "lost").length;
    const duplicated = turns.filter((turn) => turn.results > 1).length;
    if (Deno.env.get("SOAK_DEBUG")) {
      for (const turn of turns.filter((turn) => turn.results > 1)) {
        log(`duplicated: c${turn.conversation} ${turn.uuid} ${turn.results} results`);
      }
    }

    // Latency: calm, and under each fault (a turn that overlaps its window, plus 3 s).
    const latency: Record<string, { n: number; p50: number; p99: number }> = {};
    const windows = faults.map((fault) => ({ ...fault, until: fault.end + 3_000 }));
    const ok = turns.filter((turn) => turn.outcome === "delivered");
    const calm = ok.filter((turn) =>
      windows.every((w) => turn.end < w.start || turn.start > w.until)
    );
    const figure = (list: TurnRecord[]) => {
      const ms = list.map((turn) => turn.end - turn.start);
      return { n: ms.length, p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) };
    };
    latency.calm = figure(calm);
    for (const w of windows) {
      latency[w.name] = figure(ok.filter((turn) => turn.end >= w.start && turn.start <= w.until));
    }
    // From a relay's death to the next result of one of its conversations, through another.
    for (const fault of faults) {
      if (!fault.sessions || fault.sessions.size === 0) continue;
      const theirs = new Set<number>();
      for (const [conversation, ids] of cliSessions) {
        if ([...ids].some((id) => fault.sessions!.has(id))) theirs.add(conversation);
      }
      const next = ok.filter((turn) => theirs.has(turn.conversation) && turn.end > fault.start)
        .map((turn) => turn.end).sort((a, b) => a - b)[0];
      if (next !== undefined) fault.recoveredMs = next - fault.start;
    }

    // The store against what each conversation's CLI wrote (its last process), by uuid, in order.
    const store = new PostgresSessionStore(sql, { timeoutMs: 10_000 });
    const differing: string[] = [];
    let checked = 0;
    let doubledInCli = 0;
    let rerunAfterKill = 0;
    let tailLostWithKill = 0;
    const ids = new Set([...cliSessions.values()].flatMap((set) => [...set]));
    const journals = options.cli === "stand-in" ? await readJournals(journal) : undefined;
    // The user entry of each delivered turn (what must be in the store).
    const deliveredUuids = new Set(
      turns.filter((turn) => turn.outcome !== "failed").map((turn) => turn.uuid),
    );
    const everStored = new Set<string>();
    for (const id of ids) {
      let expected: string[] | undefined;
      let last: Journal | undefined;
      const stored = (await store.load({ projectKey: PROJECT_KEY, sessionId: id }))
        ?.flatMap((entry) => typeof entry.uuid === "string" ? [entry.uuid] : []);
      if (journals) {
        const list = journals.get(id) ?? [];
        // The conversation's CLI at the end: the newest that holds the store's last entry (a
        // relay that took the conversation back runs a CLI older than the one of the relay it
        // took it back from, which never had what the older one wrote after), else the newest.
        const tail = stored?.at(-1);
        last = list.findLast((process) =>
          tail !== undefined && (process.loaded.includes(tail) || process.written.includes(tail))
        ) ?? list.at(-1);
        expected = last ? [...last.loaded, ...last.written] : undefined;
        // A turn run twice: its user line written by two processes, the first of which was
        // alive (a CLI killed, or whose relay was, before its write reached the store runs
        // it again on resume: that one's host is gone).
        const writers = new Map<string, number>();
        for (const process of list) {
          for (const uuid of process.written) {
            const first = writers.get(uuid);
            if (first === undefined) {
              writers.set(uuid, process.pid);
            } else if (!killedPids.has(first)) {
              doubledInCli++;
              if (Deno.env.get("SOAK_DEBUG")) {
                log(
                  `run twice: ${id} ${uuid} by ${first} and ${process.pid} (${list.length} processes)`,
                );
              }
            } else rerunAfterKill++;
          }
        }
      } else {
        expected = await newestTranscript(root, id);
      }
      checked++;
      for (const uuid of stored ?? []) {
        everStored.add(uuid);
      }
      if (expected !== undefined && JSON.stringify(stored) === JSON.stringify(expected)) {
        continue;
      }
      const prefix = stored !== undefined && expected !== undefined &&
        stored.every((uuid, i) =>
          expected![i] === uuid
        );
      // A killed CLI (or one whose relay was) loses what it wrote after its last append
      // landed: the store is a prefix of its file, without a delivered turn's entry.
      if (
        prefix && last !== undefined && killedPids.has(last.pid) &&
        !expected!.slice(stored!.length).some((uuid) => deliveredUuids.has(uuid))
      ) {
        tailLostWithKill++;
        continue;
      }
      differing.push(
        `${id}: store ${stored?.length ?? "none"}, CLI ${expected?.length ?? "none"} ` +
          `(${journals?.get(id)?.length ?? "?"} processes: ${
            journals?.get(id)?.map((j) =>
              `${j.pid}${
                j === last ? " compared" : ""
              } loaded ${j.loaded.length} wrote ${j.written.length}`
            ).join(", ") ?? "?"
          }; store a prefix: ${prefix}; ` +
          `only in the store: ${
            stored?.filter((uuid) => !expected?.includes(uuid)).map((uuid) =>
              `${uuid.slice(0, 8)} from ${
                journals?.get(id)?.filter((j) => j.written.includes(uuid)).map((j) =>
                  `${j.pid}${killedPids.has(j.pid) ? " killed" : ""}`
                )
              }`
            )
          }; only in the CLI: ${
            expected?.filter((uuid) => !stored?.includes(uuid)).map((uuid) =>
              `${uuid.slice(0, 8)}${deliveredUuids.has(uuid) ? " delivered" : ""}`
            )
          })`,
      );
    }
    // A result the client had (a lost turn is counted apart) whose turn no store transcript holds.
    const forgotten = turns.filter((turn) =>
      (turn.outcome === "delivered" || turn.outcome === "error_result") &&
      !everStored.has(turn.uuid)
    );
    const deliveredForgotten = forgotten.length;
    if (Deno.env.get("SOAK_DEBUG")) {
      for (const turn of forgotten) {
        log(`delivered, not in the store: c${turn.conversation} ${turn.uuid}`);
      }
    }
    const [rows] = await sql<{ transcripts: string; records: string }[]>`
      SELECT count(*) FILTER (WHERE project_key = ${PROJECT_KEY}) AS transcripts,
             count(*) FILTER (WHERE project_key <> ${PROJECT_KEY}) AS records
      FROM claude_session_entries`.catch((error) => {
      log(`cannot count the store's rows: ${error}`);
      return [{ transcripts: "0", records: "0" }];
    });
    const turnsRun = delivered + errorResults;

    sampling = false;
    await Promise.all([sampler, watcher]);
    const relayRss = [...rss].map(([name, series]) => ({
      name,
      firstMib: series[0]!.mib,
      peakMib: Math.max(...series.map((s) => s.mib)),
      lastMib: series.at(-1)!.mib,
    }));
    // RSS per live session: the slope of RSS over sessions, every relay's samples pooled.
    const points = [...rss.values()].flat();
    let slope: number | undefined;
    if (points.length > 2) {
      const mx = points.reduce((s, p) => s + p.sessions, 0) / points.length;
      const my = points.reduce((s, p) => s + p.mib, 0) / points.length;
      const sxx = points.reduce((s, p) => s + (p.sessions - mx) ** 2, 0);
      const sxy = points.reduce((s, p) => s + (p.sessions - mx) * (p.mib - my), 0);
      if (sxx > 0) slope = (sxy / sxx) * 1024;
    }
    report = {
      options,
      seconds,
      turnsSent: turns.length,
      delivered,
      errorResults,
      failedTyped: failed,
      failedKinds,
      lost,
      duplicated,
      doubledInCli,
      rerunAfterKill,
      tailLostWithKill,
      deliveredForgotten,
      conversationsDone: done,
      abandoned,
      conversationsResumed: resumed,
      startsRefused,
      transcriptsChecked: checked,
      transcriptsDiffering: differing,
      turnsPerSec: turnsRun / seconds,
      latency,
      faults: faults.map((fault) => ({
        name: fault.name,
        ms: fault.end - fault.start,
        note: fault.note,
        ...(fault.recoveredMs === undefined ? {} : { recoveredMs: fault.recoveredMs }),
      })),
      burst: burstOutcomes,
      relayRss,
      relayKibPerSession: slope,
      storeRowsPerTurn: Number(rows!.transcripts) / Math.max(1, turnsRun),
      recordRowsPerTurn: Number(rows!.records) / Math.max(1, turnsRun),
      storeRowsPerSec: (Number(rows!.transcripts) + Number(rows!.records)) / seconds,
      leftProcesses: [],
      leftPorts: [],
      leftTempEntries: [],
      leftFds: [],
      relaysDied: relays.flatMap((relay) => relay.unexpected),
    };
  } finally {
    await balancer?.[Symbol.asyncDispose]();
    for (const relay of relays) {
      relayPgids.push(...relay.pids);
      await relay.stop();
    }
    await sql.end({ timeout: 2 });
    await api?.[Symbol.asyncDispose]();
    await pg[Symbol.asyncDispose]();
  }
  // Nothing left: processes (every relay, every CLI seen), ports, temp entries, fds.
  const deadline = Date.now() + 15_000;
  let left: string[] = [];
  for (;;) {
    const pgids = new Set(relayPgids);
    left = processes().filter((proc) =>
      seenPids.has(proc.pid) || pgids.has(proc.pgid) || pgids.has(proc.ppid) ||
      proc.cmdline.includes(root)
    ).map((proc) => `${proc.pid} ${proc.cmdline.slice(0, 120)}`);
    if (left.length === 0 || Date.now() > deadline) break;
    await sleep(200);
  }
  const listening = listeningPorts();
  const leftPorts = ports.filter((port) => listening.has(port));
  // A relay's temp folder: what a resume from the store materialised, removed when it ends.
  const leftTemp: string[] = [];
  for (let i = 1; i <= 3; i++) {
    for await (const entry of Deno.readDir(`${root}/relay${i}`)) {
      if (entry.name !== "home") leftTemp.push(`relay${i}/${entry.name}`);
    }
  }
  await Deno.remove(root, { recursive: true });
  if (!report) throw new Error("The soak did not finish");
  return {
    ...report,
    leftProcesses: left,
    leftPorts,
    leftTempEntries: leftTemp,
    leftFds: ownSockets().filter((line) => !socketsBefore.has(line)),
  };
}
