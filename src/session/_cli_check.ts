// This module is browser compatible.
/*
 * The session's check of a CLI its transport started, against what the
 * transport asked of it and what the session's options use (`info.cli`,
 * see `src/compat/cli_check.ts`; the features in `src/compat/cli_features.ts`):
 *
 * - the permission mode the CLI reports before its first turn must be one
 *   the session asked for, since a CLI in another mode (2.1.300's default
 *   is `auto`) runs tools without asking the host's permission handler;
 * - its version must be in the supported window, and have the features the
 *   options use (a hook event, blocking hooks, external MCP servers);
 * - a control request of a feature the version lacks is refused where it
 *   is asked for (`require`), or, for a feature that degrades, done without
 *   (`lacks`, reported in one `feature_degraded` diagnostic).
 *
 * The version is the transport's (`--version`): `startRefusal` refuses the
 * start with it. Else the CLI's first report of itself: the `initialize`
 * reply, then the first `system/init` (later ones are the session's own
 * business: plan mode ending, a mode set mid-session). The modes asked for
 * are the transport's (`--permission-mode`) and those the host set before
 * the first turn (`set_permission_mode`, a claim's `permission_mode`). A
 * refusal from a report is handed to the session once: it fails every turn,
 * interrupts the one the CLI may have begun, and ends.
 *
 * The first user line is not held for the `initialize` reply: the CLI
 * answers `initialize` before it reads that line, and writes `system/init`
 * before it calls the model, so the refusal reaches it before the model's
 * first reply could name a tool.
 */

import { floorRefusal, launchedCliOf, modeRefusal, sameMode } from "../compat/cli_check.ts";
import {
  CLI_FEATURES,
  type CliFeatureName,
  featureLabel,
  featureOfHookEvent,
  featureOfSubtype,
  hasFeature,
  missingFeature,
  requireFeature,
} from "../compat/cli_features.ts";
import type { DuplexError } from "../errors.ts";
import type { SystemInitFrame } from "../protocol/system_frames.ts";
import type { TransportInfo } from "../transport/transport.ts";
import type { SessionSettings } from "./_session_input.ts";
import type { DiagnosticEvent } from "./events.ts";

/** What the check needs from its session. */
export interface CliCheckHost {
  /** Ends the session with the refusal (called at most once). */
  refuse(refusal: DuplexError): void;
  /** Reports a feature the session does without. */
  publish(event: DiagnosticEvent): void;
}

/**
 * The features a session's options use that the CLI must have from the start.
 *
 * @param settings The checked options.
 * @returns The features, in the table's names.
 */
export function featuresUsed(settings: SessionSettings): CliFeatureName[] {
  const used = new Set<CliFeatureName>();
  for (const event of Object.keys(settings.hooks.initialize)) {
    const feature = featureOfHookEvent(event);
    if (feature !== undefined) used.add(feature);
  }
  if (settings.hooks.blocking.length > 0) used.add("blockingHooks");
  if (Object.keys(settings.mcp.external).length > 0) used.add("mcpSetServers");
  return [...used];
}

/**
 * Why a session cannot start on its transport's CLI, when the transport
 * knows the version: below the window's floor, or without a feature the
 * options use.
 *
 * @param info The transport's info.
 * @param used The features the options use.
 * @returns The `unsupported` error, or `undefined`.
 */
export function startRefusal(
  info: TransportInfo,
  used: readonly CliFeatureName[],
): DuplexError | undefined {
  const version = launchedCliOf(info)?.version;
  if (version === undefined) return undefined;
  return floorRefusal(version) ?? lacking(used, version);
}

function lacking(used: readonly CliFeatureName[], version: string): DuplexError | undefined {
  const missing = used.find((name) => hasFeature(name, version) === false);
  return missing === undefined ? undefined : missingFeature(missing, version);
}

export class CliCheck {
  /** The modes the session asked for before the first turn (empty: the mode is not known). */
  readonly #modes: Set<string>;
  readonly #asked: string | undefined;
  readonly #used: readonly CliFeatureName[];
  readonly #host: CliCheckHost;
  readonly #degraded = new Set<CliFeatureName>();
  #version: string | undefined;
  /** The first `system/init` was checked (or a refusal was made): nothing more to check. */
  #done = false;

  /**
   * The check of a transport's CLI, when the transport started it.
   *
   * @param info The transport's info.
   * @param used The features the session's options use ({@linkcode featuresUsed}).
   * @param host Ends the session, reports what it does without.
   * @returns The check, or `undefined` when the transport did not say it started the CLI.
   */
  static of(
    info: TransportInfo,
    used: readonly CliFeatureName[],
    host: CliCheckHost,
  ): CliCheck | undefined {
    const cli = launchedCliOf(info);
    return cli && new CliCheck(cli.permissionMode, cli.version, used, host);
  }

  private constructor(
    asked: string | undefined,
    version: string | undefined,
    used: readonly CliFeatureName[],
    host: CliCheckHost,
  ) {
    this.#asked = asked;
    this.#modes = new Set(asked === undefined ? [] : [asked]);
    this.#version = version;
    this.#used = used;
    this.#host = host;
  }

  /**
   * Notes a mode the session asks the CLI for before its first turn.
   *
   * @param mode The mode of a `set_permission_mode` or a claim.
   */
  asked(mode: unknown): void {
    if (!this.#done && this.#asked !== undefined && typeof mode === "string") {
      this.#modes.add(mode);
    }
  }

  /**
   * Refuses a control request of a feature the CLI's version lacks (one that
   * degrades is the caller's to do without, see `lacks`).
   *
   * @param subtype The request's subtype.
   * @throws {DuplexError} `unsupported` naming the feature, the version it
   *   needs and the version found (nothing when the version is not known).
   */
  require(subtype: string): void {
    const feature = featureOfSubtype(subtype);
    if (feature !== undefined && CLI_FEATURES[feature].below.kind === "unsupported") {
      requireFeature(feature, this.#version);
    }
  }

  /**
   * Tells whether the CLI's version lacks a feature that degrades; the first
   * time it does, says so in a `feature_degraded` diagnostic.
   *
   * @param name The feature.
   * @returns True when the session must do without it.
   */
  lacks(name: CliFeatureName): boolean {
    if (hasFeature(name, this.#version) !== false) return false;
    if (!this.#degraded.has(name)) {
      this.#degraded.add(name);
      const feature = CLI_FEATURES[name];
      const instead = feature.below.kind === "degrades" ? feature.below.to : "without it";
      this.#host.publish({
        type: "diagnostic",
        kind: "feature_degraded",
        message: `claude ${this.#version} has no ${featureLabel(feature)} (it needs ` +
          `${feature.since}): ${instead}`,
      });
    }
    return true;
  }

  /**
   * Checks the `initialize` reply (or a claim's `initialize` payload).
   *
   * @param reply The reply payload.
   * @returns The refusal, or `undefined` when the reply agrees (or names nothing).
   */
  initialized(reply: Record<string, unknown>): DuplexError | undefined {
    if (this.#done) return undefined;
    return this.#compare(reply.current_permission_mode, reply.claude_code_version, "initialize");
  }

  /**
   * Checks a `system/init` frame: the first one only.
   *
   * @param frame The frame.
   */
  systemInit(frame: SystemInitFrame): void {
    if (this.#done) return;
    this.#compare(frame.permissionMode, frame.claude_code_version, "system/init");
    this.#done = true;
  }

  #allows(reported: string): boolean {
    for (const mode of this.#modes) if (sameMode(mode, reported)) return true;
    return false;
  }

  #compare(
    reported: unknown,
    version: unknown,
    where: "initialize" | "system/init",
  ): DuplexError | undefined {
    if (typeof version === "string") this.#version = version;
    let refusal: DuplexError | undefined;
    if (this.#asked !== undefined && typeof reported === "string" && !this.#allows(reported)) {
      const later = [...this.#modes].filter((mode) => mode !== this.#asked);
      refusal = modeRefusal([this.#asked, ...later], reported, this.#version, where);
    } else if (this.#version !== undefined) {
      refusal = floorRefusal(this.#version, "run the session") ??
        lacking(this.#used, this.#version);
    }
    if (refusal === undefined) return undefined;
    this.#done = true;
    this.#host.refuse(refusal);
    return refusal;
  }
}
