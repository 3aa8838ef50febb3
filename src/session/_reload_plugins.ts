// This module is browser compatible.
/*
 * The `reload_plugins` request's fields from the SDK's `reloadPlugins`
 * options, checked: a bad value is an `invalid_argument` DuplexError and
 * nothing is sent.
 */

import { isRecord } from "../_values.ts";
import { DuplexError } from "../errors.ts";
import type { ControlRequestMap } from "../protocol/control_requests.ts";

type Fields = ControlRequestMap["reload_plugins"]["request"];
type Plugin = NonNullable<Fields["add_plugins"]>[number];

/**
 * The wire fields of `reloadPlugins`' options.
 *
 * @throws {DuplexError} `invalid_argument` for a flag that is not a boolean, or a plugin
 *   that is not `{ type: "local", path }` with an absolute path.
 */
export function reloadFields(
  holdOnCacheImpact: unknown,
  addPlugins: unknown,
  refuseIfBusy: unknown,
): Fields {
  const hold = flag("holdOnCacheImpact", holdOnCacheImpact);
  const refuse = flag("refuseIfBusy", refuseIfBusy);
  if (addPlugins !== undefined && !Array.isArray(addPlugins)) {
    throw invalid("addPlugins must be an array");
  }
  const plugins = (addPlugins as unknown[] | undefined)?.map(plugin);
  return {
    ...(hold === undefined ? {} : { hold_on_cache_impact: hold }),
    ...(plugins === undefined ? {} : { add_plugins: plugins }),
    ...(refuse === undefined ? {} : { refuse_if_busy: refuse }),
  };
}

function plugin(value: unknown, i: number): Plugin {
  if (!isRecord(value) || value.type !== "local") {
    throw invalid(`addPlugins[${i}] must be { type: "local", path }`);
  }
  if (typeof value.path !== "string" || !isAbsolute(value.path)) {
    throw invalid(`addPlugins[${i}].path must be an absolute path`);
  }
  const skip = flag(`addPlugins[${i}].skipMcpDiscovery`, value.skipMcpDiscovery);
  return {
    type: "local",
    path: value.path,
    ...(skip === undefined ? {} : { skipMcpDiscovery: skip }),
  };
}

function flag(name: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  throw invalid(`${name} must be a boolean`);
}

function invalid(what: string): DuplexError {
  return new DuplexError("invalid_argument", `Cannot reload plugins: ${what}`);
}

/* POSIX (`/…`), Windows drive (`C:\\…`) or UNC (`\\\\server\\…`). */
function isAbsolute(path: string): boolean {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\");
}
