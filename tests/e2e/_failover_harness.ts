// deno-lint-ignore-file no-console
/**
 * Helpers of the failover test and bench: relays as separate processes
 * (`_failover_relay.ts`, each leading its own process group), a real
 * HAProxy in front of them with the project's own configuration
 * (`examples/relay/haproxy.cfg`: header and idle timeouts, per-source limits,
 * health checks, routing by a conversation key in the URL query), and what a
 * test needs to kill a host and check nothing of it is left.
 *
 * @module
 */

import { cliPath } from "./_harness.ts";
import type { FailoverRelayConfig } from "./_failover_relay.ts";
import { postgresStatus } from "../stores/_postgres_server.ts";

const DECODER = new TextDecoder();
const RELAY_PROGRAM = decodeURIComponent(new URL("./_failover_relay.ts", import.meta.url).pathname);
const CONFIG = decodeURIComponent(new URL("../../deno.json", import.meta.url).pathname);
/** The HAProxy configuration the project ships for a relay that faces the internet. */
export const HAPROXY_CONFIG: string = decodeURIComponent(
  new URL("../../examples/relay/haproxy.cfg", import.meta.url).pathname,
);
/** The URL query parameter HAProxy routes by. */
export const CONVERSATION_PARAM = "conversation";

/** Whether HAProxy can be run, or why not. */
export function haproxyStatus(): { available: true } | { available: false; reason: string } {
  try {
    const output = new Deno.Command("haproxy", { args: ["-v"], stdout: "null", stderr: "null" })
      .outputSync();
    if (output.success) return { available: true };
    return { available: false, reason: "haproxy -v failed" };
  } catch {
    return { available: false, reason: "no haproxy (install the Debian package haproxy)" };
  }
}

/** Why the failover scenarios cannot run here, if they cannot. */
export function failoverUnavailable(): string | undefined {
  const cli = cliPath();
  if (!cli.available) return `the real claude CLI is unavailable (${cli.reason})`;
  const haproxy = haproxyStatus();
  if (!haproxy.available) return haproxy.reason;
  const pg = postgresStatus();
  if (!pg.available) return pg.reason;
  return undefined;
}

/**
 * Registers a failover test: IGNORED loudly (with the reason) when the CLI,
 * HAProxy or PostgreSQL is missing, FAILED instead with `CI=true`.
 */
export function failoverTest(name: string, fn: (t: Deno.TestContext) => Promise<void>): void {
  const missing = failoverUnavailable();
  if (missing === undefined) {
    Deno.test({ name, sanitizeResources: true, sanitizeOps: true, fn });
    return;
  }
  const ci = Deno.env.get("CI") === "true";
  console.error(`\n!!! ${name}: ${ci ? "FAILS (CI=true)" : "IGNORED"}: ${missing} !!!\n`);
  Deno.test({
    name: ci ? `${name} (${missing})` : `${name}: IGNORED (${missing})`,
    ignore: !ci,
    fn() {
      throw new Error(`Cannot run ${name}: ${missing}; CI must run it`);
    },
  });
}

/** A free TCP port on 127.0.0.1 (free when asked). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** A relay process. */
export interface RelayProcess extends AsyncDisposable {
  /** Its pid, also its process group id. */
  readonly pid: number;
  readonly port: number;
  /** Its `/health` answer (`undefined` when it does not answer). */
  health(): Promise<{ sessions: number } | undefined>;
  /** SIGKILL to its whole process group (the relay, not the CLIs: they lead their own). */
  kill(): void;
  /** Resolves when the process has ended. */
  readonly ended: Promise<Deno.CommandStatus>;
}

/**
 * Starts a relay process and waits until it listens (bounded).
 *
 * @param config Its settings.
 * @returns The process; disposing of it ends it (SIGTERM, then SIGKILL).
 */
export async function startRelayProcess(config: FailoverRelayConfig): Promise<RelayProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", `--config=${CONFIG}`, RELAY_PROGRAM],
    env: { FAILOVER_RELAY: JSON.stringify(config), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const ended = child.status;
  const stderr = drain(child.stderr);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  const timer = setTimeout(() => kill(child.pid), 30_000);
  try {
    while (!first.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) {
        throw new Error(`The relay process ended before it listened: ${stderr.text()}`);
      }
      first += value;
    }
  } finally {
    clearTimeout(timer);
  }
  const rest = (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  const { port } = JSON.parse(first.split("\n")[0]!) as { port: number };
  return {
    pid: child.pid,
    port,
    ended,
    async health() {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`, {
          signal: AbortSignal.timeout(2000),
        });
        return await response.json();
      } catch {
        return undefined;
      }
    },
    kill: () => kill(child.pid),
    async [Symbol.asyncDispose]() {
      try {
        Deno.kill(child.pid, "SIGTERM");
      } catch { /* gone */ }
      const late = setTimeout(() => kill(child.pid), 10_000);
      await ended;
      clearTimeout(late);
      await Promise.all([rest, stderr.done]);
    },
  };
}

/** What two relays of a failover share (each gets its own port and config folder). */
export type SharedRelayConfig = Omit<FailoverRelayConfig, "port" | "tempDir">;

/**
 * Starts relays that share a store and a workspace, each on a free port with
 * its own config folder (`<dir>/home-<name>`, its `HOME` and temp folder).
 *
 * @param shared What they share (`env` is the CLI's, less `HOME`).
 * @param dir Where their config folders go.
 * @param names Their names.
 * @returns The processes, in the order of `names`.
 */
export async function startRelays(
  shared: SharedRelayConfig,
  dir: string,
  names: readonly string[] = ["a", "b"],
): Promise<RelayProcess[]> {
  const relays: RelayProcess[] = [];
  try {
    for (const name of names) {
      const home = `${dir}/home-${name}`;
      await Deno.mkdir(home, { recursive: true });
      relays.push(
        await startRelayProcess({
          ...shared,
          port: freePort(),
          env: { ...shared.env, HOME: home },
          tempDir: home,
        }),
      );
    }
    return relays;
  } catch (error) {
    for (const relay of relays) await relay[Symbol.asyncDispose]();
    throw error;
  }
}

/** SIGKILL to a process group (nothing when it is gone). */
export function kill(pgid: number): void {
  if (!Number.isSafeInteger(pgid) || pgid <= 1) {
    throw new RangeError(`Not a process group: ${pgid}`);
  }
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch { /* gone */ }
}

/** The children (pids) of a process. */
export async function childrenOf(pid: number): Promise<number[]> {
  const output = await new Deno.Command("ps", {
    args: ["-o", "pid=", "--ppid", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  return DECODER.decode(output.stdout).split("\n").map((line) => Number(line.trim()))
    .filter((child) => child > 0);
}

/** The processes (pids) in these process groups. */
export async function groupMembers(pgids: readonly number[]): Promise<number[]> {
  const output = await new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,pgid=,stat="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return DECODER.decode(output.stdout).split("\n").flatMap((line) => {
    const [pid, pgid, stat] = line.trim().split(/\s+/);
    if (!pid || !pgid || stat?.startsWith("Z")) return [];
    return pgids.includes(Number(pgid)) ? [Number(pid)] : [];
  });
}

/** A running HAProxy. */
export interface Balancer extends AsyncDisposable {
  readonly port: number;
  /** The relay URL through it for a conversation key. */
  urlFor(conversation: string): string;
}

/** How {@linkcode startHaproxy} tunes the shipped configuration (its environment variables). */
export interface HaproxyOptions {
  /**
   * The health check's interval, failures to mark a relay down, successes
   * to mark it up. Default: every 200 ms, one of each (a failover test
   * wants a killed relay out at once); the configuration's own is 2 s, 2, 2.
   */
  readonly check?: { readonly interval: string; readonly fall: number; readonly rise: number };
}

/**
 * Starts HAProxy on a free loopback port in front of relays, with
 * `examples/relay/haproxy.cfg` as shipped: its server line replaced by one
 * per relay, its address and health-check pace set through the environment
 * variables it reads (`balance url_param conversation`, `hash-type
 * consistent`, a failed connection redispatched to another relay, checks of
 * `/health` expecting `"ok":true`).
 *
 * @param relayPorts The relays' ports.
 * @param dir A folder for its configuration file.
 * @param options The health checks' pace.
 * @returns The balancer; disposing of it stops it.
 */
export async function startHaproxy(
  relayPorts: readonly number[],
  dir: string,
  options: HaproxyOptions = {},
): Promise<Balancer> {
  const port = freePort();
  const shipped = await Deno.readTextFile(HAPROXY_CONFIG);
  const serverLine = /^\s*server relay1 .*$/m;
  if (!serverLine.test(shipped)) {
    throw new Error(`Cannot use ${HAPROXY_CONFIG}: it has no "server relay1" line to replace`);
  }
  const servers = relayPorts.map((relay, i) => `  server relay${i + 1} 127.0.0.1:${relay}`);
  const file = `${dir}/haproxy.cfg`;
  await Deno.writeTextFile(file, shipped.replace(serverLine, servers.join("\n")));
  const check = options.check ?? { interval: "200ms", fall: 1, rise: 1 };
  const { child, out, err } = await spawnHaproxy(file, port, {
    DUPLEX_PROXY_CHECK_INTERVAL: check.interval,
    DUPLEX_PROXY_CHECK_FALL: String(check.fall),
    DUPLEX_PROXY_CHECK_RISE: String(check.rise),
  });
  return {
    port,
    urlFor: (conversation) =>
      `ws://127.0.0.1:${port}/v1?${CONVERSATION_PARAM}=${encodeURIComponent(conversation)}`,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await Promise.all([out.done, err.done]);
    },
  };
}

/** A HAProxy process listening on its port, with what it printed so far. */
export interface HaproxyChild {
  readonly child: Deno.ChildProcess;
  readonly out: Drained;
  readonly err: Drained;
}

/**
 * Starts `haproxy -f file -db` bound to 127.0.0.1:port (the shipped
 * configuration reads its bind address and checks from the environment) and
 * waits, at most 10 s, until it accepts a connection.
 *
 * @param file The configuration.
 * @param port Its listening port.
 * @param env More of its `DUPLEX_PROXY_*` variables.
 * @returns The process and its output.
 * @throws {Error} When it does not listen in time (it is killed and reaped).
 */
export async function spawnHaproxy(
  file: string,
  port: number,
  env: Record<string, string>,
): Promise<HaproxyChild> {
  const child = new Deno.Command("haproxy", {
    args: ["-f", file, "-db"],
    env: { DUPLEX_PROXY_BIND: `127.0.0.1:${port}`, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = drain(child.stdout);
  const err = drain(child.stderr);
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return { child, out, err };
    } catch {
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        await child.status;
        throw new Error(`HAProxy did not listen: ${err.text()} ${out.text()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** A stream read to its end in the background: its last 16 KB, and when it ended. */
export interface Drained {
  text(): string;
  readonly done: Promise<void>;
}

/**
 * Reads a child's output stream to its end, keeping its last 16 KB.
 *
 * @param stream The stream.
 * @returns Its text so far, and its end.
 */
export function drain(stream: ReadableStream<Uint8Array>): Drained {
  let text = "";
  const done = (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text = (text + chunk).slice(-16_384);
    }
  })().catch(() => {});
  return { text: () => text, done };
}
