// deno-lint-ignore-file no-console
/**
 * A throwaway PostgreSQL for the tests and the bench: `initdb` into a fresh
 * temporary folder, `postgres` on 127.0.0.1 and a free port, trust
 * authentication, no Unix socket; stopped and removed afterwards.
 *
 * - {@linkcode postgresStatus} finds the server binaries (`PG_BIN`, else the
 *   newest Debian `/usr/lib/postgresql/<version>/bin`, else `PATH`).
 * - {@linkcode postgresTest} registers a test with its own server, started
 *   once for the test (its steps share it) and always stopped. Without
 *   PostgreSQL the test is IGNORED with the reason, loudly; with `CI=true`
 *   it FAILS instead (`.ci/run` installs the Debian package).
 * - PostgreSQL refuses to run as root: as root, the server runs as the
 *   `postgres` user the Debian package creates (else `nobody`), which owns
 *   the folder.
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { unavailableTest } from "../_unavailable.ts";

/** Whether PostgreSQL can be run here, and where its binaries are. */
export type PostgresStatus =
  | { readonly available: true; readonly bin: string; readonly version: string }
  | { readonly available: false; readonly reason: string };

const DECODER = new TextDecoder();

function run(cmd: string, args: string[], ids: Ids = {}): { code: number; out: string } {
  try {
    const output = new Deno.Command(cmd, { args, ...ids, stdout: "piped", stderr: "piped" })
      .outputSync();
    return {
      code: output.code,
      out: DECODER.decode(output.stdout) + DECODER.decode(output.stderr),
    };
  } catch (error) {
    return { code: -1, out: messageOf(error) };
  }
}

let cachedStatus: PostgresStatus | undefined;

/**
 * Finds `initdb` and `postgres`: in `PG_BIN` when set, else in the newest
 * `/usr/lib/postgresql/<version>/bin` (Debian), else on `PATH`.
 *
 * @returns Where they are and the version, or why they are unusable.
 */
export function postgresStatus(): PostgresStatus {
  if (cachedStatus) return cachedStatus;
  const custom = Deno.env.get("PG_BIN");
  const dirs = custom ? [custom] : [
    ...Array.from({ length: 9 }, (_, i) => `/usr/lib/postgresql/${18 - i}/bin`),
    "",
  ];
  for (const dir of dirs) {
    const postgres = dir ? `${dir}/postgres` : "postgres";
    const probe = run(postgres, ["--version"]);
    if (probe.code !== 0) continue;
    const initdb = run(dir ? `${dir}/initdb` : "initdb", ["--version"]);
    if (initdb.code !== 0) continue;
    cachedStatus = { available: true, bin: dir, version: probe.out.trim() };
    return cachedStatus;
  }
  cachedStatus = {
    available: false,
    reason: custom
      ? `no postgres and initdb in PG_BIN=${custom}`
      : "no PostgreSQL server binaries (install the Debian package postgresql, or set PG_BIN)",
  };
  return cachedStatus;
}

interface Ids {
  uid?: number;
  gid?: number;
}

/* As root, the ids of the user the server runs as (postgres, else nobody). */
function serverIds(): Ids {
  if (run("id", ["-u"]).out.trim() !== "0") return {};
  for (const user of ["postgres", "nobody"]) {
    const uid = run("id", ["-u", user]);
    const gid = run("id", ["-g", user]);
    if (uid.code === 0 && gid.code === 0) {
      return { uid: Number(uid.out.trim()), gid: Number(gid.out.trim()) };
    }
  }
  throw new Error("Cannot run PostgreSQL as root, and there is no postgres or nobody user");
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** Options of {@linkcode startPostgres}. */
export interface StartPostgresOptions {
  /**
   * Keep PostgreSQL's durability settings (fsync, synchronous commit), as a
   * production server has them; by default they are off, for fast tests.
   */
  readonly durable?: boolean;
}

/** A running throwaway PostgreSQL. */
export interface PostgresServer extends AsyncDisposable {
  /** `127.0.0.1`. */
  readonly host: string;
  /** Its TCP port (kept across {@linkcode PostgresServer.stop} and `start`). */
  readonly port: number;
  /** The superuser, `postgres` (trust authentication). */
  readonly user: string;
  /** The database, `postgres`. */
  readonly database: string;
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  /** The server's version line. */
  readonly version: string;
  /** True while the server process runs. */
  readonly running: boolean;
  /** Stops the server (fast shutdown, bounded; SIGKILL after 10 s); the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data (after `stop`). */
  start(): Promise<void>;
  /** The server's last log lines (bounded). */
  log(): string;
}

const READY_MS = 30_000;
const STOP_MS = 10_000;
const LOG_LINES = 200;

class Server implements PostgresServer {
  readonly host = "127.0.0.1";
  readonly user = "postgres";
  readonly database = "postgres";
  readonly port: number;
  readonly version: string;
  readonly #bin: string;
  readonly #dir: string;
  readonly #ids: Ids;
  readonly #durable: boolean;
  #child: Deno.ChildProcess | undefined;
  #drained: Promise<void> = Promise.resolve();
  #log: string[] = [];

  constructor(bin: string, version: string, dir: string, ids: Ids, port: number, durable: boolean) {
    this.#bin = bin;
    this.version = version;
    this.#dir = dir;
    this.#ids = ids;
    this.port = port;
    this.#durable = durable;
  }

  get url(): string {
    return `postgres://${this.user}@${this.host}:${this.port}/${this.database}`;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  log(): string {
    return this.#log.join("\n");
  }

  async start(): Promise<void> {
    if (this.#child) return;
    const settings = ["unix_socket_directories=", "max_connections=60"];
    if (!this.#durable) {
      settings.push("fsync=off", "synchronous_commit=off", "full_page_writes=off");
    }
    const child = new Deno.Command(this.#tool("postgres"), {
      args: ["-D", `${this.#dir}/data`, "-h", this.host, "-p", String(this.port)]
        .concat(settings.flatMap((setting) => ["-c", setting])),
      ...this.#ids,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    const ready = Promise.withResolvers<void>();
    this.#drained = this.#drain(child.stderr, ready.resolve);
    const timer = setTimeout(() => ready.reject(new Error("not ready")), READY_MS);
    const exited = child.status.then((status) => {
      throw new Error(`exited with ${status.code}`);
    });
    try {
      await Promise.race([ready.promise, exited]);
    } catch (error) {
      await this.stop();
      throw new Error(
        `Cannot start PostgreSQL on port ${this.port}: ${messageOf(error)}\n${this.log()}`,
      );
    } finally {
      clearTimeout(timer);
      exited.catch(() => {});
    }
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#child = undefined;
    try {
      child.kill("SIGINT"); // fast shutdown: ends the sessions, checkpoints
    } catch { /* already gone */ }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => timer = setTimeout(resolve, STOP_MS, "late"));
    if (await Promise.race([child.status, late]) === "late") {
      try {
        child.kill("SIGKILL");
      } catch { /* gone meanwhile */ }
    }
    clearTimeout(timer);
    await child.status;
    await this.#drained;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    const removed = await new Deno.Command("rm", { args: ["-rf", this.#dir], stderr: "null" })
      .output();
    if (!removed.success) console.error(`Cannot remove ${this.#dir}`);
  }

  #tool(name: string): string {
    return this.#bin ? `${this.#bin}/${name}` : name;
  }

  async #drain(stream: ReadableStream<Uint8Array>, onReady: () => void): Promise<void> {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      for (const line of chunk.split("\n")) {
        if (!line) continue;
        this.#log.push(line);
        if (this.#log.length > LOG_LINES) this.#log.shift();
        if (line.includes("ready to accept connections")) onReady();
      }
    }
  }
}

/**
 * Creates a fresh cluster and starts PostgreSQL on it (about 1-2 s).
 *
 * @param options Durability.
 * @returns The running server; dispose of it to stop it and remove its folder.
 * @throws {Error} When PostgreSQL is unavailable or does not start.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const status = postgresStatus();
  if (!status.available) throw new Error(`Cannot start PostgreSQL: ${status.reason}`);
  const ids = serverIds();
  const made = await new Deno.Command("mktemp", { args: ["-d"], ...ids, stdout: "piped" }).output();
  const dir = DECODER.decode(made.stdout).trim();
  if (!made.success || !dir) throw new Error("Cannot create a folder for PostgreSQL (mktemp -d)");
  const bin = status.bin;
  const initdb = await new Deno.Command(bin ? `${bin}/initdb` : "initdb", {
    args: ["-D", `${dir}/data`, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C"]
      .concat(options.durable ? [] : ["--no-sync"]),
    ...ids,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!initdb.success) {
    await new Deno.Command("rm", { args: ["-rf", dir] }).output();
    throw new Error(`Cannot initdb in ${dir}: ${DECODER.decode(initdb.stderr).slice(-2000)}`);
  }
  // A port taken between freePort() and the bind: try another one.
  for (let attempt = 1;; attempt++) {
    const server = new Server(bin, status.version, dir, ids, freePort(), options.durable === true);
    try {
      await server.start();
      return server;
    } catch (error) {
      if (attempt >= 3) {
        await server[Symbol.asyncDispose]();
        throw error;
      }
    }
  }
}

/**
 * Registers a test that gets its own PostgreSQL (started before `fn`,
 * stopped and removed after it, whatever happens). Without PostgreSQL, the
 * test is IGNORED with the reason printed; with `CI=true` it fails instead.
 *
 * @param name The test's name.
 * @param fn The test; its steps share the server.
 */
export function postgresTest(
  name: string,
  fn: (t: Deno.TestContext, server: PostgresServer) => Promise<void>,
): void {
  const status = postgresStatus();
  if (status.available) {
    Deno.test(name, async (t) => {
      await using server = await startPostgres();
      await fn(t, server);
    });
    return;
  }
  unavailableTest(name, status.reason);
}
