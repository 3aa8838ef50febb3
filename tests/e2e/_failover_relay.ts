// deno-lint-ignore-file no-console
/**
 * A relay process of the failover test and bench and of the soak
 * (`tests/soak/`): `serveRelay` over a PostgreSQL session store, configured
 * by one JSON environment variable, `FAILOVER_RELAY`
 * ({@linkcode FailoverRelayConfig}). It prints one line,
 * `{"url":…,"port":…}`, once it listens, and closes on SIGTERM or SIGINT. A
 * process of its own, so that a test can SIGKILL it, or SIGSTOP and SIGCONT
 * it.
 *
 * @module
 */

import postgres from "postgres";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";

/** What a failover relay runs with. */
export interface FailoverRelayConfig {
  readonly token: string;
  readonly workspace: string;
  readonly port: number;
  /** The shared PostgreSQL (`postgres://…`). */
  readonly postgresUrl: string;
  readonly projectKey: string;
  /** The CLI binary and its whole environment (HOME: this relay's own config folder). */
  readonly binary: string;
  readonly env: Record<string, string>;
  /** Where a resume from the store materialises its private config folder. */
  readonly tempDir: string;
  /** Arguments before the relay's flags (a stand-in CLI's script). */
  readonly binaryArgs?: readonly string[];
  /** Its `maxSessions` (one owner: the whole); the relay's default when absent. */
  readonly maxSessions?: number;
  /** Its `graceMs`; the relay's default when absent. */
  readonly graceMs?: number;
  /** Its `maxPendingConnections`; the relay's default when absent. */
  readonly maxPendingConnections?: number;
  /** The mirror's `catchUpDelayMs`; the default when absent. */
  readonly catchUpDelayMs?: number;
}

const config = JSON.parse(Deno.env.get("FAILOVER_RELAY") ?? "null") as FailoverRelayConfig | null;
if (config === null) {
  console.error("Cannot start the failover relay: FAILOVER_RELAY is not set");
  Deno.exit(2);
}
// The client's reconnect backoff capped low: the test stops and starts the server.
const sql = postgres(config.postgresUrl, {
  onnotice: () => {},
  max: 4,
  connect_timeout: 3,
  backoff: (retries: number) => Math.min(3 ** retries / 100, 0.5),
});
const relay = serveRelay({
  tokens: [config.token],
  workspace: config.workspace,
  // Each relay's own HOME (config.env), as on two hosts.
  tenancy: "shared",
  port: config.port,
  sessionStore: new PostgresSessionStore(sql, { timeoutMs: 5_000 }),
  projectKey: config.projectKey,
  storeTimeoutMs: 2_000,
  heartbeatMs: 2_000,
  policy: { exposePid: true },
  ...(config.graceMs === undefined ? {} : { graceMs: config.graceMs }),
  ...(config.maxSessions === undefined ? {} : { maxSessions: config.maxSessions }),
  ...(config.maxPendingConnections === undefined
    ? {}
    : { maxPendingConnections: config.maxPendingConnections }),
  cli: {
    binary: config.binary,
    ...(config.binaryArgs === undefined ? {} : { binaryArgs: config.binaryArgs }),
    ...(config.catchUpDelayMs === undefined
      ? {}
      : { mirror: { catchUpDelayMs: config.catchUpDelayMs } }),
    env: config.env,
    clearEnv: true,
    tempDir: config.tempDir,
    // relay.close() ends them on SIGTERM, leaving their records for the other relay.
    hostSignal: "ignore",
  },
});
console.log(JSON.stringify({ url: relay.url, port: relay.port }));

const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
function onSignal(): void {
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  void relay.close();
}
for (const signal of signals) Deno.addSignalListener(signal, onSignal);
await relay.closed;
await sql.end({ timeout: 2 });
