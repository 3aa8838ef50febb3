/**
 * A relay process of the capacity bench: `serveRelay` over the pool's
 * stand-in CLI, configured by `CAPACITY_RELAY` (`{ token, workspace,
 * maxSessions, standIn, configDir, store }`: the stand-in's path, its
 * `CLAUDE_CONFIG_DIR`, and whether the relay mirrors to a store in memory). It prints one line, `{"url":…}`, once it listens; a
 * SIGTERM closes it (the relay's default `hostSignal`).
 *
 * @module
 */

import { serveRelay } from "../../adapters/relay/mod.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import { standInCli } from "./_capacity_proc.ts";

const config = JSON.parse(Deno.env.get("CAPACITY_RELAY") ?? "null") as
  | {
    token: string;
    workspace: string;
    maxSessions: number;
    standIn: string;
    configDir: string;
    store: boolean;
  }
  | null;
if (config === null) throw new Error("Cannot start the capacity relay: CAPACITY_RELAY is not set");
const relay = serveRelay({
  tokens: [config.token],
  workspace: config.workspace,
  tenancy: "shared",
  maxSessions: config.maxSessions,
  ...(config.store && { sessionStore: new InMemorySessionStore(), projectKey: "capacity" }),
  cli: standInCli(config.standIn, config.configDir),
});
// deno-lint-ignore no-console
console.log(JSON.stringify({ url: relay.url }));
await relay.closed;
