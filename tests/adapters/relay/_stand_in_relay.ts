/**
 * A relay of a pair (or more) sharing one session store, each on its own
 * HOME, their CLIs the fleet soak's stand-in (`tests/soak/_soak_cli.ts`):
 * what the soak's regression tests run two relays with.
 *
 * @module
 */

import { type RelayOptions, type RelayServer, serveRelay } from "../../../adapters/relay/mod.ts";
import type { SessionStore } from "../../../src/store/session_store.ts";
import { TOKEN } from "./_client.ts";

const STAND_IN = decodeURIComponent(
  new URL("../../soak/_soak_cli.ts", import.meta.url).pathname,
);

/** What differs between the tests' relays. */
export interface StandInRelayOptions {
  /** The store's project key for the transcripts. */
  readonly projectKey: string;
  /** More environment for the stand-in (its journal folder, say). */
  readonly env?: Record<string, string>;
  /** Other relay options (`cli`'s are added to the stand-in's). */
  readonly relay?: Partial<RelayOptions>;
}

/**
 * Starts a relay on `<root>/<name>` as its HOME, its workspace `<root>/work` (shared tenancy).
 *
 * @param root The test's folder.
 * @param name The relay's name (its HOME's folder).
 * @param store The shared store.
 * @param options The project key, the stand-in's environment, other relay options.
 * @returns The relay.
 */
export function standInRelay(
  root: string,
  name: string,
  store: SessionStore,
  options: StandInRelayOptions,
): RelayServer {
  const home = `${root}/${name}`;
  Deno.mkdirSync(home, { recursive: true });
  Deno.mkdirSync(`${root}/work`, { recursive: true });
  const { cli, ...relay } = options.relay ?? {};
  return serveRelay({
    tokens: [TOKEN],
    workspace: `${root}/work`,
    tenancy: "shared",
    sessionStore: store,
    projectKey: options.projectKey,
    cli: {
      binary: Deno.execPath(),
      binaryArgs: ["run", "-A", "--no-config", "--quiet", STAND_IN],
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin", HOME: home, ...options.env },
      clearEnv: true,
      tempDir: home,
      hostSignal: "ignore",
      ...cli,
    },
    ...relay,
  });
}
