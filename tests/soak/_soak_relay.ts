// deno-lint-ignore-file no-console
/**
 * A relay process of the soak: `serveRelay` over the shared PostgreSQL
 * session store, configured by one JSON environment variable, `SOAK_RELAY`
 * ({@linkcode SoakRelayConfig}). It prints one line, `{"url":…,"port":…}`,
 * once it listens, and closes on SIGTERM or SIGINT. A separate process, so
 * that the soak can SIGKILL it, or SIGSTOP and SIGCONT it.
 *
 * @module
 */

import postgres from "postgres";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";

/** What a soak relay runs with. */
export interface SoakRelayConfig {
  readonly token: string;
  readonly workspace: string;
  readonly port: number;
  /** The shared PostgreSQL (`postgres://…`). */
  readonly postgresUrl: string;
  readonly projectKey: string;
  /** The CLI: its binary, the arguments before the relay's flags, its whole environment. */
  readonly binary: string;
  readonly binaryArgs: readonly string[];
  readonly env: Record<string, string>;
  /** Where a resume from the store materialises its private config folder. */
  readonly tempDir: string;
  /** Its `maxSessions` (one owner: the whole). */
  readonly maxSessions: number;
  /** Its `graceMs`. */
  readonly graceMs: number;
}

const config = JSON.parse(Deno.env.get("SOAK_RELAY") ?? "null") as SoakRelayConfig | null;
if (config === null) {
  console.error("Cannot start the soak relay: SOAK_RELAY is not set");
  Deno.exit(2);
}
// Reconnect to a restarted PostgreSQL within half a second.
const sql = postgres(config.postgresUrl, {
  onnotice: () => {},
  max: 4,
  connect_timeout: 3,
  backoff: (retries: number) => Math.min(3 ** retries / 100, 0.5),
});
const relay = serveRelay({
  tokens: [config.token],
  workspace: config.workspace,
  tenancy: "shared",
  port: config.port,
  sessionStore: new PostgresSessionStore(sql, { timeoutMs: 5_000 }),
  projectKey: config.projectKey,
  storeTimeoutMs: 2_000,
  heartbeatMs: 2_000,
  graceMs: config.graceMs,
  maxSessions: config.maxSessions,
  maxPendingConnections: 256,
  cli: {
    binary: config.binary,
    binaryArgs: config.binaryArgs,
    env: config.env,
    clearEnv: true,
    tempDir: config.tempDir,
    hostSignal: "ignore",
    mirror: { catchUpDelayMs: 300 },
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
