// This module is browser compatible.
/*
 * Which `claude` feature the library uses needs which CLI version, and what
 * happens on a CLI without it: the table `CLI_FEATURES` (the README's
 * compatibility table and `docs/compatibility.md` are checked against it),
 * and the errors of a feature asked for on a CLI that lacks it.
 *
 * A feature is named by what the library uses: a flag (`--await-claim`), a
 * control subtype (`cancel_async_message`), an `initialize` field, a hook
 * event, a permission mode. `below` says what a CLI older than `since` gets:
 * `unsupported` (a `DuplexError` where the feature is asked for, naming it,
 * the version it needs and the version found) or `degrades` (the library
 * does without it, and says so in one diagnostic).
 *
 * A version that is not known (a wrapper binary, a transport that does not
 * tell) is given the benefit of the doubt: the feature is used, and a CLI
 * that rejects its flag is reported by `rejectedFlag`.
 *
 * The versions are the first seen by the measurements of issue 23 (every
 * release from 2.1.268 to 2.1.332 installed and run offline): `2.1.268` means
 * "2.1.268 or older", the oldest checked. Every flag, control subtype and hook
 * event the library uses that the table does not list is in 2.1.289 or older.
 */

import { DuplexError, excerptOf, type TransportExit } from "../errors.ts";
import { type CliVersion, compareCliVersions, parseCliVersion } from "./cli_versions.ts";

/** What the library uses of the CLI, as the table names it. */
export interface CliFeature {
  /** What it is for, for a person: `"parked spares"`. */
  readonly title: string;
  /** How the library asks for it: a flag, a control subtype, a field, a mode. */
  readonly uses:
    | { readonly flag: string }
    | { readonly subtype: string }
    | { readonly field: string }
    | { readonly hookEvent: string }
    | { readonly mode: string };
  /** The first CLI version that has it. */
  readonly since: string;
  /** What a CLI older than `since` gets. */
  readonly below:
    | { readonly kind: "unsupported" }
    | { readonly kind: "degrades"; readonly to: string };
}

/** The features, by name. */
export type CliFeatureName =
  | "awaitClaim"
  | "sessionMirror"
  | "cancelQueued"
  | "blockingHooks"
  | "hookEvents"
  | "preSkillShellCommand"
  | "setHasSubscribers"
  | "mcpSetServers";

const FEATURES: Readonly<Record<CliFeatureName, CliFeature>> = {
  awaitClaim: {
    title: "parked spares",
    uses: { flag: "--await-claim" },
    since: "2.1.281",
    below: { kind: "degrades", to: "warm spares (started without --await-claim)" },
  },
  sessionMirror: {
    title: "transcript mirroring to a session store",
    uses: { flag: "--session-mirror" },
    since: "2.1.268",
    below: { kind: "unsupported" },
  },
  cancelQueued: {
    title: "withdrawing a queued prompt",
    uses: { subtype: "cancel_async_message" },
    since: "2.1.268",
    below: { kind: "degrades", to: "an aborted queued prompt is interrupted when it starts" },
  },
  blockingHooks: {
    title: 'hooks with onFailure: "block"',
    uses: { field: "hook_on_failure_supported" },
    since: "2.1.317",
    below: { kind: "unsupported" },
  },
  hookEvents: {
    title: "hook events in the output",
    uses: { flag: "--include-hook-events" },
    since: "2.1.268",
    below: { kind: "unsupported" },
  },
  preSkillShellCommand: {
    title: "PreSkillShellCommand hooks",
    uses: { hookEvent: "PreSkillShellCommand" },
    since: "2.1.332",
    below: { kind: "unsupported" },
  },
  setHasSubscribers: {
    title: "telling the CLI whether anyone subscribes",
    uses: { subtype: "set_has_subscribers" },
    since: "2.1.319",
    below: { kind: "unsupported" },
  },
  mcpSetServers: {
    title: "setting MCP servers over the control channel",
    uses: { subtype: "mcp_set_servers" },
    since: "2.1.268",
    below: { kind: "unsupported" },
  },
};

/** Each feature the library uses, the version it needs, and what happens below it. */
export const CLI_FEATURES: Readonly<Record<CliFeatureName, CliFeature>> = FEATURES;

/** How a feature is named in a message: `parked spares (--await-claim)`. */
export function featureLabel(feature: CliFeature): string {
  const uses = feature.uses;
  const how = "flag" in uses
    ? uses.flag
    : "subtype" in uses
    ? `the ${uses.subtype} control request`
    : "field" in uses
    ? `${uses.field} in the initialize reply`
    : "hookEvent" in uses
    ? `the ${uses.hookEvent} hook event`
    : `permission mode "${uses.mode}"`;
  return `${feature.title} (${how})`;
}

/**
 * Tells whether a CLI version has a feature.
 *
 * @param name The feature.
 * @param version The CLI's version (text or parsed), or `undefined` when unknown.
 * @returns True or false; `undefined` when the version is not known.
 */
export function hasFeature(
  name: CliFeatureName,
  version: CliVersion | string | undefined,
): boolean | undefined {
  const found = typeof version === "string" ? parseCliVersion(version) : version;
  if (found === undefined) return undefined;
  return compareCliVersions(found, CLI_FEATURES[name].since) >= 0;
}

/**
 * The error of a feature asked for on a CLI that lacks it.
 *
 * @param name The feature.
 * @param version The version found.
 * @returns An `unsupported` error: `Cannot use <feature>: it needs claude <since> or newer,
 *   and this claude is <version>; upgrade claude`.
 */
export function missingFeature(name: CliFeatureName, version: CliVersion | string): DuplexError {
  const feature = CLI_FEATURES[name];
  const found = typeof version === "string" ? version : version.text;
  return new DuplexError(
    "unsupported",
    `Cannot use ${featureLabel(feature)}: it needs claude ${feature.since} or newer, and this ` +
      `claude is ${found}; upgrade claude (npm install -g @anthropic-ai/claude-code)`,
  );
}

/**
 * Throws when a CLI version is known to lack a feature.
 *
 * @param name The feature.
 * @param version The CLI's version, or `undefined` when unknown (then nothing is thrown).
 * @throws {DuplexError} `unsupported` ({@linkcode missingFeature}).
 */
export function requireFeature(
  name: CliFeatureName,
  version: CliVersion | string | undefined,
): void {
  if (hasFeature(name, version) === false) throw missingFeature(name, version as string);
}

/** The feature a control subtype belongs to, if the table lists it. */
export function featureOfSubtype(subtype: string): CliFeatureName | undefined {
  return SUBTYPES.get(subtype);
}

/** The feature a flag belongs to, if the table lists it. */
export function featureOfFlag(flag: string): CliFeatureName | undefined {
  return FLAGS.get(flag);
}

/** The feature a hook event belongs to, if the table lists it (older events need nothing). */
export function featureOfHookEvent(event: string): CliFeatureName | undefined {
  return EVENTS.get(event);
}

const SUBTYPES = new Map<string, CliFeatureName>();
const FLAGS = new Map<string, CliFeatureName>();
const EVENTS = new Map<string, CliFeatureName>();
for (const [name, feature] of Object.entries(CLI_FEATURES) as [CliFeatureName, CliFeature][]) {
  if ("subtype" in feature.uses) SUBTYPES.set(feature.uses.subtype, name);
  if ("flag" in feature.uses) FLAGS.set(feature.uses.flag, name);
  if ("hookEvent" in feature.uses) EVENTS.set(feature.uses.hookEvent, name);
}

/**
 * The error of a CLI that exited because it does not know a flag of the
 * table (`error: unknown option '--await-claim'` on its stderr).
 *
 * @param exit How the CLI ended.
 * @returns An `unsupported` error naming the flag, its feature and the
 *   stderr line, or `undefined` when the exit is not that (or the flag is
 *   not one the table lists: an `extraArgs` flag stays the CLI's exit).
 */
export function rejectedFlag(exit: TransportExit): DuplexError | undefined {
  if (exit.code === 0 || exit.requested) return undefined;
  const match = /unknown option '(--[A-Za-z0-9-]+)/.exec(exit.stderrTail);
  const name = match ? featureOfFlag(match[1] as string) : undefined;
  if (name === undefined) return undefined;
  const feature = CLI_FEATURES[name];
  const line = exit.stderrTail.split("\n").find((l) => l.includes("unknown option")) ?? "";
  return new DuplexError(
    "unsupported",
    `Cannot use ${featureLabel(feature)}: claude rejected the flag ${match?.[1]} ` +
      `(stderr: ${excerptOf(line.trim(), 200)}); it needs claude ${feature.since} or newer; ` +
      `upgrade claude (npm install -g @anthropic-ai/claude-code)`,
    { exit },
  );
}
