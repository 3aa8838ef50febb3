/**
 * The ACP agent program an editor launches: `deno task acp` in the
 * repository, `deno run -A jsr:@duplex/claude/acp` from JSR. It speaks
 * ACP on stdin and stdout and writes its own messages to stderr.
 *
 * Flags (all optional):
 *
 * - `--cli=<path>`: the `claude` binary (else `CLAUDE_CODE_EXECUTABLE`, else
 *   `claude` on `PATH`).
 * - `--model=<alias>`: the model of new sessions.
 * - `--permission-mode=<mode>`: the mode of new sessions (`default`).
 * - `--allow-bypass`: offer the `bypassPermissions` mode.
 * - `--max-live=<n>`: the most live CLIs (8); beyond, idle sessions hibernate.
 * - `--idle-ms=<ms>`: hibernate a session idle this long.
 * - `--store-dir=<folder>`: a `DirectorySessionStore` that transcripts are
 *   mirrored to and loaded and listed from.
 * - `--relay=wss://…/v1 --token=<token>`: run every CLI on a relay (the token
 *   may come from `DUPLEX_RELAY_TOKEN` instead, which keeps it out of `ps`).
 * - `--otel`: spans and metrics per prompt through Deno's built-in
 *   OpenTelemetry (needs `OTEL_DENO=true` in the environment the editor
 *   gives the program).
 *
 * Ends when the editor closes stdin, or on SIGINT / SIGTERM, closing every CLI.
 *
 * @module
 */

import { serveAcp } from "./serve_acp.ts";
import type { AcpAgentOptions } from "./acp_options.ts";
import { DirectorySessionStore } from "../subprocess/history/mod.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import type { PermissionMode } from "../../src/protocol/control.ts";

const FLAGS = [
  "cli",
  "model",
  "permission-mode",
  "allow-bypass",
  "max-live",
  "idle-ms",
  "store-dir",
  "relay",
  "token",
  "otel",
];

function fail(message: string): never {
  Deno.stderr.writeSync(new TextEncoder().encode(`${message}\n`));
  Deno.exit(2);
}

function flags(args: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const arg of args) {
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!match || !FLAGS.includes(match[1]!)) {
      fail(
        `Cannot start the ACP agent: unknown argument ${arg}; the flags are --${
          FLAGS.join(", --")
        }`,
      );
    }
    found.set(match[1]!, match[2] ?? "");
  }
  return found;
}

function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    fail(`Cannot start the ACP agent: --${name} must be a positive integer, not ${value}`);
  }
  return parsed;
}

const given = flags(Deno.args);
const binary = given.get("cli") || Deno.env.get("CLAUDE_CODE_EXECUTABLE");
const process: SubprocessOptions = {
  ...(binary ? { binary } : {}),
  ...(given.get("model") ? { model: given.get("model")! } : {}),
  ...(given.get("permission-mode")
    ? { permissionMode: given.get("permission-mode") as PermissionMode }
    : {}),
};
const relayUrl = given.get("relay");
const token = given.get("token") || Deno.env.get("DUPLEX_RELAY_TOKEN");
if (relayUrl !== undefined && !token) {
  fail("Cannot start the ACP agent: --relay needs --token or DUPLEX_RELAY_TOKEN");
}
if (given.has("otel") && Deno.env.get("OTEL_DENO") !== "true") {
  fail("Cannot start the ACP agent with --otel: set OTEL_DENO=true in its environment");
}
const storeDir = given.get("store-dir");
const maxLive = count(given.get("max-live"), "max-live");
const idleMs = count(given.get("idle-ms"), "idle-ms");
const options: AcpAgentOptions = {
  process,
  ...(relayUrl ? { relay: { url: relayUrl, token: token! } } : {}),
  ...(storeDir ? { sessionStore: new DirectorySessionStore(storeDir) } : {}),
  ...(given.has("allow-bypass") ? { allowBypassPermissions: true } : {}),
  ...(maxLive === undefined ? {} : { maxLive }),
  ...(idleMs === undefined ? {} : { idleMs }),
  ...(given.has("otel")
    ? { telemetry: { api: await import("npm:@opentelemetry/api@1.9.1") } }
    : {}),
  onLog: (message) => Deno.stderr.writeSync(new TextEncoder().encode(`[acp] ${message}\n`)),
};

const served = serveAcp({ stdin: Deno.stdin.readable, stdout: Deno.stdout.writable, ...options });
const stop = (): void => {
  void served.close();
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
await served.closed;
Deno.removeSignalListener("SIGINT", stop);
Deno.removeSignalListener("SIGTERM", stop);
