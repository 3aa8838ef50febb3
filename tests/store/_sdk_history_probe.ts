/**
 * Runs the official SDK's history functions for a test and prints their
 * results as JSON (the SDK's module needs `--allow-sys=homedir`, which the
 * tests do not have: `_sdk_history.ts` runs this in a child process).
 *
 * Reads one JSON request on stdin: `configDir` (set as `CLAUDE_CONFIG_DIR`),
 * `store` (entries to append, by key, to an SDK `InMemorySessionStore`
 * passed where an argument is `"$store"` or has `sessionStore: "$store"`),
 * and `calls` (`{ fn, args }` of SDK exports, or `store.<method>` of that
 * store, run in order; `"$undefined"` stands for `undefined`). Prints one
 * result per call: `{ ok }` or `{ error }`.
 *
 * @module
 */

import { pathToFileURL } from "node:url";
import { sdkEntry } from "../bench/install_sdk.ts";

interface Request {
  readonly configDir?: string;
  readonly store?: readonly { key: unknown; entries: unknown[] }[];
  readonly calls: readonly { fn: string; args: unknown[] }[];
}

// deno-lint-ignore no-explicit-any
const sdk: any = await import(pathToFileURL(sdkEntry()).href);
const request: Request = JSON.parse(await new Response(Deno.stdin.readable).text());
if (request.configDir) Deno.env.set("CLAUDE_CONFIG_DIR", request.configDir);
const store = new sdk.InMemorySessionStore();
for (const { key, entries } of request.store ?? []) await store.append(key, entries);

function bind(arg: unknown): unknown {
  if (arg === "$store") return store;
  if (arg === "$undefined") return undefined; // JSON has none
  if (typeof arg === "object" && arg !== null && (arg as Record<string, unknown>).sessionStore) {
    return { ...arg, sessionStore: store };
  }
  return arg;
}

const results: unknown[] = [];
for (const call of request.calls) {
  try {
    const fn = call.fn.startsWith("store.")
      ? store[call.fn.slice("store.".length)].bind(store)
      : sdk[call.fn];
    results.push({ ok: (await fn(...call.args.map(bind))) ?? null });
  } catch (error) {
    results.push({ error: error instanceof Error ? error.message : String(error) });
  }
}
await Deno.stdout.write(new TextEncoder().encode(`${JSON.stringify(results)}\n`));
