// This module is browser compatible.
/**
 * {@linkcode SessionHandshake}: what a session knows of the CLI it talks to
 * and the requests that renew it: the session id, the `initialize` reply
 * (`info`, `initialized`, `initializationResult()`), `reinitialize()` for a
 * client that reconnected, `supportedCommands()` and `claimSession()` for a
 * parked spare. The base of {@linkcode DuplexSession}, over the session's
 * startup part (`_startup.ts`).
 *
 * @module
 */

import { initializeFieldsFor } from "../mcp/sdk_mcp_wiring.ts";
import type { InitializeResponse, SlashCommandInfo } from "../protocol/control_requests.ts";
import type { SessionParts } from "./_session_parts.ts";
import { type ClaimOptions, type ClaimResult, readClaim, sendClaim } from "./claim.ts";
import { SessionControls } from "./session_controls.ts";
import type { SessionInfo } from "./session_info.ts";
import type { ControlRequestOptions } from "./session_options.ts";

/**
 * The handshake half of a {@linkcode DuplexSession} (its base class, over
 * {@linkcode SessionControls}): the CLI's session id and `initialize`
 * reply, and the requests that renew them. Only `DuplexSession` extends it.
 */
export abstract class SessionHandshake extends SessionControls {
  readonly #parts: SessionParts;
  #sessionId: string | undefined;

  /**
   * Wires the session (`DuplexSession`'s constructor passes its wiring).
   *
   * @param wire Builds the session's parts, given the function that takes each `system/init`'s
   *   session id.
   * @ignore
   */
  protected constructor(wire: (identified: (sessionId: string) => void) => SessionParts) {
    super();
    this.#parts = wire((sessionId) => void (this.#sessionId = sessionId));
  }

  /** The CLI's session id, known once the first turn started (`undefined` before). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** The CLI's answer to `initialize` (commands, models, account, version…), once it came. */
  get info(): SessionInfo | undefined {
    return this.#parts.startup.info;
  }

  /**
   * Resolves with the CLI's answer to `initialize` (`undefined` when none was
   * sent); rejects with a `control_failed` or `timeout` DuplexError when it
   * failed, and with an `unsupported` one when a hook asks for
   * `onFailure: "block"` and the answer does not confirm it.
   */
  get initialized(): Promise<SessionInfo | undefined> {
    return this.#parts.startup.initialized;
  }

  /**
   * The CLI's `initialize` reply (commands, agents, models, account, output
   * styles, pid, version, what it applied…): the startup's, waited for
   * (bounded by `controlTimeoutMs`; a failed startup's error rejects it
   * too); after `claimSession`, the claim's; after `reinitialize()`, that
   * one's. A session that sent no `initialize` at start (no option needed
   * one) sends one now, with no fields.
   *
   * @param options A signal and a timeout for the wait.
   * @returns The reply payload.
   * @throws {DuplexError} As the startup's `initialize` failed (`control_failed`, `timeout`,
   *   `unsupported`), or `closed` / `process_exited`.
   */
  override initializationResult(options: ControlRequestOptions = {}): Promise<InitializeResponse> {
    const send = (sendOptions: ControlRequestOptions) =>
      this.request("initialize", { ...this.#parts.startup.fields }, sendOptions);
    try {
      return this.#parts.startup.result(send, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Sends `initialize` again to the running CLI (the SDK's `reinitialize`),
   * with the fields of the first one (the hooks as registered, the
   * in-process MCP servers of now): for a client that reconnected after a
   * gap. The CLI re-registers the hooks and lists the requests it still
   * waits on (`can_use_tool`, `request_user_dialog`); the session serves
   * them as just delivered: one it is serving already stays the same
   * request (no second handler call, no second `pendingPermissions`
   * entry), one it answered gets that answer again, any other is new (the
   * handler runs, a `permission_request` event is published). Measured on
   * 2.1.332: the re-sent requests come only in the reply (no second
   * `control_request` frame), and the original request id is still the one
   * to answer.
   *
   * @param options A signal and a timeout.
   * @returns The fresh reply, which `info` and `initializationResult()` now describe.
   * @throws {DuplexError} `control_failed`, `timeout`, `closed`, `process_exited`.
   */
  async reinitialize(options: ControlRequestOptions = {}): Promise<InitializeResponse> {
    const fields: Record<string, unknown> = { ...this.#parts.startup.fields };
    delete fields.sdkMcpServers;
    Object.assign(fields, initializeFieldsFor(this.#parts.requests.mcpServers));
    const reply = await this.request("initialize", fields, options);
    this.#parts.startup.reinitialized(reply);
    return reply;
  }

  /**
   * The slash commands (and skills) the session offers: the latest
   * `system/commands_changed` list the CLI pushed, else the `initialize`
   * reply's (as the SDK does).
   *
   * @param options A signal and a timeout (see `initializationResult`).
   * @returns The commands.
   */
  async supportedCommands(options: ControlRequestOptions = {}): Promise<SlashCommandInfo[]> {
    const { commands } = await this.initializationResult(options);
    return this.#parts.startup.commands ??
      (Array.isArray(commands) ? commands.filter((c) => typeof c?.name === "string") : []);
  }

  /**
   * Binds a parked spare (a CLI started with `--await-claim`, the subprocess
   * option `awaitClaim`) to its folder and conversation, before its first
   * turn; `sessionId` and `info` then describe the claimed session. A model,
   * a thinking budget and settings go with the claim as the official SDK
   * sends them (`sendClaim`: settings ahead of it, `set_model` after it).
   *
   * @param claim The folder and the per-session options.
   * @param options A signal and a timeout.
   * @returns The claimed folder, session id and `initialize` payload.
   * @throws {DuplexError} `claim_refused` with the CLI's reason in `errorCode` (the spare
   *   stays parked: close it; `settings_not_applied` / `option_not_applied`: it was claimed,
   *   close it); `invalid_argument` for hook settings (nothing sent); `timeout`, `closed`,
   *   `process_exited`.
   */
  async claimSession(
    claim: ClaimOptions,
    options: ControlRequestOptions = {},
  ): Promise<ClaimResult> {
    const result = readClaim(
      await sendClaim(claim, (subtype, fields) => this.request(subtype, fields, options)),
    );
    this.#sessionId = result.sessionId;
    if (result.info) this.#parts.startup.claimed(result.info);
    return result;
  }
}
