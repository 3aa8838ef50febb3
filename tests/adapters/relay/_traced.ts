/**
 * The relay's telemetry under test: the real OpenTelemetry SDK in memory
 * (spans and metrics), and a relay that records what it passed to each CLI
 * launch (the transport factory's context) before the subprocess adapter
 * runs it.
 */

import { Relay } from "../../../adapters/relay/_relay.ts";
import { checkOptions } from "../../../adapters/relay/_relay_config.ts";
import type { RelayOptions, RelayServer } from "../../../adapters/relay/mod.ts";
import { subprocess } from "../../../adapters/subprocess/mod.ts";
import type { TransportOpenContext } from "../../../src/transport/transport.ts";
import { countedCli, makeTestDir, TOKEN } from "./_client.ts";
import { Otel, otel, parentOf, type ReadableSpan } from "../../telemetry/_otel.ts";

export { Otel, otel, parentOf, type ReadableSpan };

/** The trace context one stand-in CLI found in its environment. */
export interface SeenEnv {
  readonly pid: number;
  readonly TRACEPARENT: string | null;
  readonly TRACESTATE: string | null;
}

/** A relay whose CLI launches are recorded. */
export interface TracedRelay {
  readonly relay: RelayServer;
  /** What the relay passed to each CLI's transport factory, in order. */
  readonly launches: TransportOpenContext[];
  /** The trace context each stand-in CLI found in its environment, in start order. */
  seenEnv(): Promise<SeenEnv[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A relay on a fresh workspace running the counted stand-in CLI (its pid
 * exposed), whose launches go through `subprocess()` as always and are
 * recorded first.
 */
export async function tracedRelay(
  options: Partial<RelayOptions> = {},
  env: Record<string, string> = {},
): Promise<TracedRelay> {
  const workspace = await makeTestDir();
  const envLog = `${workspace}.env`;
  const launches: TransportOpenContext[] = [];
  const config = checkOptions({
    tokens: [TOKEN],
    workspace,
    cli: countedCli(`${workspace}.spawns`, { ...env, RELAY_ENV_LOG: envLog }),
    ...options,
    policy: { exposePid: true, ...options.policy },
  });
  const relay = new Relay(config, (cli) => {
    const open = subprocess(cli);
    return (context) => {
      launches.push(context);
      return open(context);
    };
  });
  return {
    relay,
    launches,
    async seenEnv() {
      const text = await Deno.readTextFile(envLog).catch(() => "");
      return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
    },
    async [Symbol.asyncDispose]() {
      await relay.close();
      for (const file of [envLog, `${workspace}.spawns`]) await Deno.remove(file).catch(() => {});
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

/** Every attribute value of every span and event, as one text (to look for secrets in). */
export function everything(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(spans.map((span) => ({
    name: span.name,
    attributes: span.attributes,
    status: span.status,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
  })));
}
