/**
 * The soak's fleet on loopback: relay processes (`tests/e2e/_failover_relay.ts`, each
 * leading its own process group, so that a SIGKILL, SIGSTOP or SIGCONT
 * reaches the whole relay), HAProxy with the configuration the project ships
 * (`examples/relay/haproxy.cfg`: its server line replaced by one per relay,
 * a stats socket added for its runtime API) and what the soak reads of them
 * (`/proc`: RSS, children, command lines).
 *
 * @module
 */

import { drain, freePort, HAPROXY_CONFIG, spawnHaproxy } from "../e2e/_failover_harness.ts";
import type { FailoverRelayConfig } from "../e2e/_failover_relay.ts";

const RELAY_PROGRAM = decodeURIComponent(
  new URL("../e2e/_failover_relay.ts", import.meta.url).pathname,
);
const CONFIG = decodeURIComponent(new URL("../../deno.json", import.meta.url).pathname);
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** A relay process, restartable on its port. */
export interface SoakRelay {
  readonly name: string;
  readonly port: number;
  /** Its current pid (its process group id), `undefined` while down. */
  readonly pid: number | undefined;
  /** Every pid it has had (each start). */
  readonly pids: readonly number[];
  /** Starts it (again) on its port; resolves once it listens (bounded: 30 s). */
  start(): Promise<void>;
  /** Sends a signal to its whole process group. */
  signal(signal: Deno.Signal): void;
  /** SIGKILL, and waits until it has ended. */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after 10 s), and waits until it has ended. */
  stop(): Promise<void>;
  /** Each time it ended without `kill()` or `stop()`: its exit status and the end of its stderr. */
  readonly unexpected: readonly string[];
}

/** Makes a relay (not started). */
export function soakRelay(name: string, config: Omit<FailoverRelayConfig, "port">): SoakRelay {
  const port = freePort();
  const pids: number[] = [];
  let child: Deno.ChildProcess | undefined;
  let ended: Promise<unknown> = Promise.resolve();
  /** Set while a kill or stop of ours is under way: that end is expected. */
  let ending = false;
  const unexpected: string[] = [];
  const signalGroup = (signal: Deno.Signal) => {
    const pid = child?.pid;
    if (pid === undefined || pid <= 1) return;
    try {
      Deno.kill(-pid, signal);
    } catch { /* gone */ }
  };
  const relay: SoakRelay = {
    name,
    port,
    get pid() {
      return child?.pid;
    },
    pids,
    unexpected,
    async start() {
      if (child) return;
      const process = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", `--config=${CONFIG}`, RELAY_PROGRAM],
        env: {
          FAILOVER_RELAY: JSON.stringify({ ...config, port }),
          NO_COLOR: "1",
          TMPDIR: config.tempDir,
        },
        clearEnv: false,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        detached: true,
      }).spawn();
      child = process;
      pids.push(process.pid);
      const stderr = drain(process.stderr);
      const reader = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let first = "";
      const timer = setTimeout(() => signalGroup("SIGKILL"), 30_000);
      try {
        while (!first.includes("\n")) {
          const { done, value } = await reader.read();
          if (done) throw new Error(`Relay ${name} ended before it listened: ${stderr.text()}`);
          first += value;
        }
      } finally {
        clearTimeout(timer);
      }
      const rest = (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      ended = Promise.all([process.status, rest, stderr.done]).then(([status]) => {
        if (child === process) child = undefined;
        if (!ending) {
          unexpected.push(
            `${name} (pid ${process.pid}) ended by itself: code ${status.code}, signal ` +
              `${status.signal}; stderr: ${stderr.text().slice(-2000)}`,
          );
        }
      });
    },
    signal: signalGroup,
    async kill() {
      ending = true;
      signalGroup("SIGKILL");
      await ended;
      ending = false;
    },
    async stop() {
      ending = true;
      signalGroup("SIGCONT");
      signalGroup("SIGTERM");
      const late = setTimeout(() => signalGroup("SIGKILL"), 10_000);
      await ended;
      clearTimeout(late);
      ending = false;
    },
  };
  return relay;
}

/** A running HAProxy with its runtime API. */
export interface SoakBalancer extends AsyncDisposable {
  readonly port: number;
  readonly pid: number;
  /** The relay URL through it for a conversation key. */
  urlFor(conversation: string): string;
  /** One runtime API command (`set server relays/relay1 state maint`); its answer. */
  command(line: string): Promise<string>;
}

/** How the soak tunes the shipped configuration through its environment variables. */
export interface BalancerOptions {
  /** Per-source connections at once (`DUPLEX_PROXY_SOURCE_CONNECTIONS`). */
  readonly sourceConnections: number;
  /** Per-source new connections per 10 s (`DUPLEX_PROXY_SOURCE_RATE`). */
  readonly sourceRate: number;
  /** Per-source HTTP requests per 10 s, upgrades and refusal probes (`DUPLEX_PROXY_SOURCE_REQUEST_RATE`). */
  readonly sourceRequestRate: number;
}

/**
 * Starts HAProxy on a free loopback port in front of the relays, with the
 * shipped configuration: its server line replaced by one per relay, a stats
 * socket (`level admin`) added to its `global` section, health checks every
 * 200 ms (one failure marks a relay down, one success up).
 *
 * @param relays The relays (name `relayN` for the N-th, from 1).
 * @param dir A folder for its configuration and socket.
 * @param options The per-source limits: every client of the soak has one address.
 * @returns The balancer; disposing of it stops it.
 */
export async function startBalancer(
  relays: readonly SoakRelay[],
  dir: string,
  options: BalancerOptions,
): Promise<SoakBalancer> {
  const port = freePort();
  const shipped = await Deno.readTextFile(HAPROXY_CONFIG);
  const serverLine = /^\s*server relay1 .*$/m;
  const global = /^global\n/m;
  if (!serverLine.test(shipped) || !global.test(shipped)) {
    throw new Error(`Cannot use ${HAPROXY_CONFIG}: no "server relay1" line or "global" section`);
  }
  // The runtime API on a loopback TCP port (a unix socket needs more than --allow-net=127.0.0.1).
  const statsPort = freePort();
  const servers = relays.map((relay, i) => `  server relay${i + 1} 127.0.0.1:${relay.port}`);
  const file = `${dir}/haproxy.cfg`;
  await Deno.writeTextFile(
    file,
    shipped.replace(serverLine, servers.join("\n"))
      .replace(global, `global\n  stats socket ipv4@127.0.0.1:${statsPort} level admin\n`),
  );
  const { child, out, err } = await spawnHaproxy(file, port, {
    DUPLEX_PROXY_CHECK_INTERVAL: "200ms",
    DUPLEX_PROXY_CHECK_FALL: "1",
    DUPLEX_PROXY_CHECK_RISE: "1",
    DUPLEX_PROXY_SOURCE_CONNECTIONS: String(options.sourceConnections),
    DUPLEX_PROXY_SOURCE_RATE: String(options.sourceRate),
    DUPLEX_PROXY_SOURCE_REQUEST_RATE: String(options.sourceRequestRate),
  });
  return {
    port,
    pid: child.pid,
    urlFor: (conversation) =>
      `ws://127.0.0.1:${port}/v1?conversation=${encodeURIComponent(conversation)}`,
    async command(line) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: statsPort });
      try {
        await conn.write(ENCODER.encode(line + "\n"));
        let text = "";
        const buffer = new Uint8Array(65_536);
        const timer = setTimeout(() => conn.close(), 5_000);
        try {
          for (;;) {
            const n = await conn.read(buffer);
            if (n === null) break;
            text += DECODER.decode(buffer.subarray(0, n));
          }
        } catch {
          /* closed by the timer */
        } finally {
          clearTimeout(timer);
        }
        return text;
      } finally {
        try {
          conn.close();
        } catch { /* closed */ }
      }
    },
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await Promise.all([out.done, err.done]);
    },
  };
}

/** A live process as `ps` lists it. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  /** Resident set, MiB. */
  readonly rssMib: number;
  readonly cmdline: string;
}

/* `ps` (Deno grants reading /proc only with -A). */
function run(cmd: string, args: string[]): string {
  const output = new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).outputSync();
  return DECODER.decode(output.stdout);
}

/** Every live process (zombies left out). */
export function processes(): ProcessInfo[] {
  return run("ps", ["-e", "-o", "pid=,ppid=,pgid=,rss=,stat=,args="]).split("\n").flatMap(
    (line) => {
      const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
      if (!match || match[5]!.startsWith("Z")) return [];
      return [{
        pid: Number(match[1]),
        ppid: Number(match[2]),
        pgid: Number(match[3]),
        rssMib: Number(match[4]) / 1024,
        cmdline: match[6]!,
      }];
    },
  );
}

/** The CLI session id a CLI command line names (`--session-id`, `--resume`). */
export function sessionOfCmdline(cmdline: string): string | undefined {
  return /--(?:session-id|resume)[= ]([0-9a-f-]{36})/.exec(cmdline)?.[1];
}

/** The TCP ports listening (`ss -ltn`). */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const line of run("ss", ["-ltnH"]).split("\n")) {
    const local = line.trim().split(/\s+/)[3];
    const port = Number(local?.slice(local.lastIndexOf(":") + 1));
    if (Number.isSafeInteger(port)) ports.add(port);
  }
  return ports;
}
