// This module is browser compatible.
/**
 * {@linkcode RelayPolicy}: what the clients of a relay may choose when they
 * spawn a session, and its default permission modes. It lives with the
 * tokens because both ends speak it: the relay's operator sets it
 * (`serveRelay({ policy })`), and a scoped token's policy
 * (`RelayTokenPolicy`, its fields and `cwd`) narrows it.
 *
 * @module
 */

/**
 * What clients of a relay may choose when they spawn a session. A scoped
 * token's policy (`RelayTokenPolicy`) narrows it for that token's holder.
 */
export interface RelayPolicy {
  /**
   * The models a client may ask for. Default: any name of 1 to 64 letters,
   * digits, `.`, `_` or `-`.
   */
  readonly models?: readonly string[];
  /**
   * The permission modes a client may ask for. Default:
   * `["default", "acceptEdits", "plan"]`; `bypassPermissions` only when listed.
   */
  readonly permissionModes?: readonly string[];
  /** The most agentic turns per prompt; also applied when the client asks for none. */
  readonly maxTurns?: number;
  /**
   * Whether a client may resume an earlier CLI conversation by the CLI's
   * session id (`spawn.resume`), and a session after a drop. Only a
   * conversation the relay started for the same owner (a static token, or a
   * scoped token's subject) can be resumed by its id: one this relay started
   * since it started (the last 10 000 at most, an owner's share of them
   * its share of `maxSessions`), or, with a `sessionStore`, one any relay
   * sharing the store started. Any other id, a name, and another owner's
   * conversation are refused alike (`unknown_session`, after the same
   * work), so that the id in another tenant's frames opens nothing.
   * Default: true.
   */
  readonly allowResume?: boolean;
  /** Whether a client may ask for partial-message stream events. Default: true. */
  readonly allowPartialMessages?: boolean;
  /**
   * Whether the `ready` message tells clients the CLI's process id (which
   * says something about the host). Default: false.
   */
  readonly exposePid?: boolean;
}

/** Default of {@linkcode RelayPolicy.permissionModes}. */
export const DEFAULT_PERMISSION_MODES: readonly string[] = ["default", "acceptEdits", "plan"];
