// This module is browser compatible.
/*
 * The session's check of the CLI against what its transport asked of it
 * (`info.cli`, see `src/compat/cli_check.ts`): the permission mode the CLI
 * reports before its first turn must be one the session asked for, since a
 * CLI in another mode (2.1.300's default is `auto`) runs tools without
 * asking the host's permission handler.
 *
 * The modes asked for are the transport's (`--permission-mode`) and those
 * the host set before the first turn (`set_permission_mode`, a claim's
 * `permission_mode`). The reports checked are the `initialize` reply's
 * `current_permission_mode` and the first `system/init`'s `permissionMode`;
 * later modes are the session's own business (plan mode ending, a mode set
 * mid-session). On a mismatch the refusal is handed to the session once: it
 * fails every turn, interrupts the one the CLI may have begun, and ends.
 *
 * The first user line is not held for the `initialize` reply: the CLI
 * answers `initialize` before it reads that line, and writes `system/init`
 * before it calls the model, so the refusal reaches it before the model's
 * first reply could name a tool.
 */

import { launchedCliOf, modeRefusal } from "../compat/cli_check.ts";
import type { DuplexError } from "../errors.ts";
import type { SystemInitFrame } from "../protocol/system_frames.ts";
import type { TransportInfo } from "../transport/transport.ts";

export class CliCheck {
  /** The modes the session asked for before the first turn. */
  readonly #modes: Set<string>;
  readonly #asked: string;
  readonly #version: string | undefined;
  readonly #refuse: (refusal: DuplexError) => void;
  /** The first `system/init` was checked (or a refusal was made): nothing more to check. */
  #done = false;

  /**
   * The check of a transport's CLI, when the transport stated the mode it asked for.
   *
   * @param info The transport's info.
   * @param refuse Ends the session with the refusal (called at most once).
   * @returns The check, or `undefined` when there is nothing to check.
   */
  static of(info: TransportInfo, refuse: (refusal: DuplexError) => void): CliCheck | undefined {
    const cli = launchedCliOf(info);
    if (cli?.permissionMode === undefined) return undefined;
    return new CliCheck(cli.permissionMode, cli.version, refuse);
  }

  private constructor(
    asked: string,
    version: string | undefined,
    refuse: (refusal: DuplexError) => void,
  ) {
    this.#asked = asked;
    this.#modes = new Set([asked]);
    this.#version = version;
    this.#refuse = refuse;
  }

  /**
   * Notes a mode the session asks the CLI for before its first turn.
   *
   * @param mode The mode of a `set_permission_mode` or a claim.
   */
  asked(mode: unknown): void {
    if (!this.#done && typeof mode === "string") this.#modes.add(mode);
  }

  /**
   * Checks the `initialize` reply (or a claim's `initialize` payload).
   *
   * @param reply The reply payload.
   * @returns The refusal, or `undefined` when the reply agrees (or names no mode).
   */
  initialized(reply: Record<string, unknown>): DuplexError | undefined {
    if (this.#done) return undefined;
    const version = typeof reply.claude_code_version === "string"
      ? reply.claude_code_version
      : this.#version;
    return this.#compare(reply.current_permission_mode, version, "initialize");
  }

  /**
   * Checks a `system/init` frame: the first one only.
   *
   * @param frame The frame.
   */
  systemInit(frame: SystemInitFrame): void {
    if (this.#done) return;
    const version = typeof frame.claude_code_version === "string"
      ? frame.claude_code_version
      : this.#version;
    this.#compare(frame.permissionMode, version, "system/init");
    this.#done = true;
  }

  #compare(
    reported: unknown,
    version: string | undefined,
    where: "initialize" | "system/init",
  ): DuplexError | undefined {
    if (typeof reported !== "string" || this.#modes.has(reported)) return undefined;
    this.#done = true;
    const later = [...this.#modes].filter((mode) => mode !== this.#asked);
    const refusal = modeRefusal([this.#asked, ...later], reported, version, where);
    this.#refuse(refusal);
    return refusal;
  }
}
