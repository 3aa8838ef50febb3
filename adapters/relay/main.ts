/**
 * `deno task relay`: serves a relay configured by environment variables.
 *
 * - `DUPLEX_RELAY_TOKENS`: static bearer tokens, comma-separated.
 * - `DUPLEX_RELAY_SECRETS`: the secrets of scoped tokens (`mintRelayToken`),
 *   comma-separated, the current one first (one or two, 32 bytes at least).
 *   At least one of these two variables is required.
 * - `DUPLEX_RELAY_HEALTH_TOKENS`: tokens that may read `/health` and nothing
 *   else, comma-separated (a load balancer's); when set, `/health` answers
 *   only a request with one of them or a relay token (`health`), a bare 401
 *   otherwise. Default: `/health` is open.
 * - `DUPLEX_RELAY_ORIGINS`: the browser origins allowed, comma-separated
 *   (default: any; connections without an `Origin` header are always allowed).
 * - `DUPLEX_RELAY_PORT`: the port (default 8787).
 * - `DUPLEX_RELAY_HOSTNAME`: the address (default 127.0.0.1).
 * - `DUPLEX_RELAY_WORKSPACE`: the workspace root (default: the current folder).
 * - `CLAUDE_CLI`: the `claude` binary (default: `claude` on `PATH`).
 * - `DUPLEX_RELAY_STORE_DIR`: a folder for a `DirectorySessionStore` (the
 *   relay's `sessionStore`): transcripts are mirrored there, and relays
 *   sharing the folder (on one host, or a shared file system) resume each
 *   other's conversations. Default: no store. (For PostgreSQL, call
 *   `serveRelay` with a `PostgresSessionStore` from code.)
 * - `DUPLEX_RELAY_PROJECT_KEY`: the store's project key of the transcripts
 *   (`projectKey`; needs `DUPLEX_RELAY_STORE_DIR`).
 * - `DUPLEX_RELAY_TENANCY`: `per-owner` (default: each owner gets its own
 *   `HOME`, configuration folder and workspace under
 *   `<workspace>/tenants/`) or `shared` (`tenancy`).
 * - `DUPLEX_RELAY_ISOLATION`: `none` (default) or `bubblewrap`: each CLI in
 *   a `bwrap` sandbox that shows it only its owner's folders (`cli.isolation`;
 *   needs Debian's `bubblewrap`).
 * - `DUPLEX_RELAY_CLI_ENV`: the names of more variables of this environment
 *   the CLIs get, comma-separated (for example `HTTPS_PROXY,NO_PROXY`); none
 *   of the `DUPLEX_RELAY_*` ones may be listed.
 *
 * The CLIs get none of this environment but `PATH`, the `ANTHROPIC_*` and
 * `CLAUDE_*` variables (less those naming the relay's own folders; see the
 * relay's `tenancy` option) and what `DUPLEX_RELAY_CLI_ENV` lists: the tokens
 * and secrets are read once, taken out of this program's environment, and
 * never reach a child.
 *
 * Closes every session and exits on SIGINT or SIGTERM.
 *
 * One flag: `--otel` (`deno task relay --otel`) emits the relay's spans and
 * metrics (`claude.relay.connection`, `claude.relay.session`, the
 * `claude.relay.*` counters; see the relay's `telemetry` option) through
 * Deno's built-in OpenTelemetry exporter, configured by the standard
 * `OTEL_*` variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, default
 * `http://localhost:4318`; `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_SERVICE_NAME`).
 * Deno reads `OTEL_DENO` only when it starts: without `OTEL_DENO=true` in the
 * environment the relay runs itself again with it (the same program under
 * `deno run -A`, so it needs `--allow-run` for Deno itself, which `deno task
 * relay`'s `-A` gives), passing SIGINT and SIGTERM on; with it, nothing is
 * run again.
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { DirectorySessionStore } from "../subprocess/history/mod.ts";
import { serveRelay } from "./mod.ts";
import { OTEL_API, OTEL_CHILD, parentLeft, rerunUnderOtel } from "./_otel_rerun.ts";

function fail(message: string): never {
  // deno-lint-ignore no-console
  console.error(message);
  Deno.exit(2);
}

function list(name: string): string[] {
  return (Deno.env.get(name) ?? "").split(",").map((item) => item.trim())
    .filter((item) => item !== "");
}

for (const arg of Deno.args) {
  if (arg !== "--otel") {
    fail(`Cannot start the relay: unknown argument ${arg}; the one flag is --otel`);
  }
}
const otel = Deno.args.includes("--otel");
if (otel && Deno.env.get("OTEL_DENO") !== "true") {
  try {
    await rerunUnderOtel(Deno.args);
  } catch (error) {
    fail(
      `Cannot start the relay with --otel: running it again under OTEL_DENO=true failed ` +
        `(${messageOf(error)}); set OTEL_DENO=true yourself`,
    );
  }
}
const otelChild = Deno.env.get(OTEL_CHILD) === "1";
Deno.env.delete(OTEL_CHILD);
const telemetry = otel ? { api: await import(OTEL_API) } : undefined;

const tokens = list("DUPLEX_RELAY_TOKENS");
const secrets = list("DUPLEX_RELAY_SECRETS");
const healthTokens = list("DUPLEX_RELAY_HEALTH_TOKENS");
// Read once: nothing later in this program (nor a child of it) finds them in its environment.
for (const name of ["DUPLEX_RELAY_TOKENS", "DUPLEX_RELAY_SECRETS", "DUPLEX_RELAY_HEALTH_TOKENS"]) {
  Deno.env.delete(name);
}
const origins = list("DUPLEX_RELAY_ORIGINS");
if (tokens.length === 0 && secrets.length === 0) {
  fail(
    "Cannot start the relay: DUPLEX_RELAY_TOKENS and DUPLEX_RELAY_SECRETS are both empty; set " +
      "static tokens, secrets for scoped tokens, or both",
  );
}
const portText = Deno.env.get("DUPLEX_RELAY_PORT") ?? "8787";
const port = Number(portText);
if (!/^\d+$/.test(portText) || port > 65535) {
  fail(`Cannot start the relay: DUPLEX_RELAY_PORT must be a port number, got ${portText}`);
}
const binary = Deno.env.get("CLAUDE_CLI");
const storeDir = Deno.env.get("DUPLEX_RELAY_STORE_DIR") ?? "";
const projectKey = Deno.env.get("DUPLEX_RELAY_PROJECT_KEY") ?? "";
const tenancy = Deno.env.get("DUPLEX_RELAY_TENANCY") ?? "per-owner";
if (tenancy !== "per-owner" && tenancy !== "shared") {
  fail(`Cannot start the relay: DUPLEX_RELAY_TENANCY must be per-owner or shared, got ${tenancy}`);
}
const isolation = Deno.env.get("DUPLEX_RELAY_ISOLATION") ?? "none";
if (isolation !== "none" && isolation !== "bubblewrap") {
  fail(
    `Cannot start the relay: DUPLEX_RELAY_ISOLATION must be none or bubblewrap, got ${isolation}`,
  );
}
const passed: Record<string, string> = {};
for (const name of list("DUPLEX_RELAY_CLI_ENV")) {
  if (name.startsWith("DUPLEX_RELAY_")) {
    fail(`Cannot start the relay: DUPLEX_RELAY_CLI_ENV lists ${name}, the relay's own setting`);
  }
  const value = Deno.env.get(name);
  if (value !== undefined) passed[name] = value;
}

let relay;
try {
  relay = serveRelay({
    tokens,
    ...(secrets.length > 0 && { secrets }),
    ...(origins.length > 0 && { allowedOrigins: origins }),
    ...(healthTokens.length > 0 && { health: { tokens: healthTokens } }),
    port,
    hostname: Deno.env.get("DUPLEX_RELAY_HOSTNAME") ?? "127.0.0.1",
    workspace: Deno.env.get("DUPLEX_RELAY_WORKSPACE") ?? Deno.cwd(),
    ...(storeDir !== "" && { sessionStore: new DirectorySessionStore(storeDir) }),
    ...(projectKey !== "" && { projectKey }),
    tenancy,
    ...(telemetry !== undefined && { telemetry }),
    // On SIGINT / SIGTERM the relay closes first (its clients told 1001, with a store their
    // records left resumable by another relay), then any CLI still open; this program exits
    // once it has closed.
    cli: {
      hostSignal: "close",
      isolation,
      ...(binary !== undefined && binary !== "" && { binary }),
      ...(Object.keys(passed).length > 0 && { extraEnv: passed }),
    },
  });
} catch (error) {
  fail(messageOf(error));
}
const server = relay;

// deno-lint-ignore no-console
console.log(`Relay listening on ${server.url}`);

const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
function onSignal(): void {
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  void server.close();
}
for (const signal of signals) Deno.addSignalListener(signal, onSignal);
// Run again for --otel: the parent speaks through stdin (its signals, or its death).
if (otelChild) void parentLeft().then(onSignal);
await server.closed;
for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
