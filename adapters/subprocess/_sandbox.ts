/* The `sandbox` option merged into the settings' own `sandbox` block, by the rules the official
 * SDK documents for its option of the same name. */

import type { SandboxSettings } from "./cli_options.ts";

/** Deny lists: the entries of both sides are kept. */
const COMBINED = new Set([
  "filesystem.denyRead",
  "filesystem.denyWrite",
  "network.deniedDomains",
  "credentials.files",
  "credentials.envVars",
]);
/** Objects the option replaces whole instead of merging. */
const REPLACED = new Set(["ripgrep", "network.tlsTerminate"]);
const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const PROXY_PORTS = ["httpProxyPort", "socksProxyPort"] as const;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function merge(base: unknown, over: Json, path: string): Json {
  const merged: Json = isObject(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined || UNSAFE_KEYS.has(key)) continue;
    const at = path ? `${path}.${key}` : key;
    const current = Object.hasOwn(merged, key) ? merged[key] : undefined;
    if (COMBINED.has(at) && Array.isArray(current) && Array.isArray(value)) {
      merged[key] = [...new Set([...current, ...value])];
    } else if (isObject(current) && isObject(value) && !REPLACED.has(at)) {
      merged[key] = merge(current, value, at);
    } else {
      merged[key] = value;
    }
  }
  return merged;
}

/**
 * The settings with `sandbox` merged into their `sandbox` block: the
 * option's values win, nested objects merge key by key, deny lists combine.
 * Two settings the option would otherwise leave switching its restrictions
 * off are dropped: `filesystem.disabled: true` when the option restricts the
 * file system, and the proxy ports when it restricts the network (traffic
 * through one's own proxy is not checked against those lists). With
 * `enabled: true`, `failIfUnavailable` defaults to `true`.
 */
export function mergeSandbox(settings: Json, sandbox: SandboxSettings): Json {
  const merged = merge(settings.sandbox, sandbox as Json, "");
  const filesystem = merged.filesystem;
  const credentialFiles = (sandbox.credentials as { files?: unknown } | undefined)?.files;
  const restrictsFiles = sandbox.filesystem !== undefined ||
    (Array.isArray(credentialFiles) &&
      credentialFiles.some((file) => isObject(file) && file.mode === "deny"));
  if (
    restrictsFiles && isObject(filesystem) && filesystem.disabled === true &&
    (sandbox.filesystem as Json | undefined)?.disabled === undefined
  ) {
    const { disabled: _, ...rest } = filesystem;
    merged.filesystem = rest;
  }
  const network = sandbox.network as Json | undefined;
  const denied = network?.deniedDomains;
  const restrictsNetwork = network?.allowedDomains !== undefined ||
    (Array.isArray(denied) && denied.length > 0) || network?.strictAllowlist === true;
  if (restrictsNetwork && isObject(merged.network)) {
    const kept: Json = { ...merged.network };
    for (const port of PROXY_PORTS) {
      if (network?.[port] === undefined) delete kept[port];
    }
    merged.network = kept;
  }
  if (sandbox.enabled === true && merged.failIfUnavailable === undefined) {
    merged.failIfUnavailable = true;
  }
  return { ...settings, sandbox: merged };
}
