/**
 * {@linkcode HistoryOptions}: where the session history functions look for
 * the CLI's transcripts, and how a caller stops them or sees what they skip.
 *
 * @module
 */

import type { SessionStore } from "../../../src/store/session_store.ts";

/**
 * A transcript line the history functions could not use. Lines are skipped,
 * never fatal: the CLI may be writing the file at that moment, or a crash may
 * have left half a line.
 */
export interface SkippedLine {
  /** The transcript that holds the line. */
  readonly file: string;
  /**
   * What was wrong with it:
   * - `noise`, `invalid_json`, `not_an_object`, `line_too_long`: not a JSON
   *   object line (as the session's own decoder reports them);
   * - `invalid_entry`: a JSON object that claims to be a message but lacks
   *   what one needs (a `uuid`, a `message` object).
   */
  readonly kind: "noise" | "invalid_json" | "not_an_object" | "line_too_long" | "invalid_entry";
  /** A sentence saying what was skipped and why. */
  readonly message: string;
  /** The first characters of the line (at most 200). */
  readonly excerpt: string;
}

/**
 * Options every session history function takes.
 *
 * The CLI keeps one transcript per session at
 * `<configDir>/projects/<folder>/<sessionId>.jsonl`, where `<folder>` is the
 * session's working directory with every character other than `A-Z`, `a-z`
 * and `0-9` replaced by `-` (`/home/me/app` becomes `-home-me-app`; a name
 * longer than 200 characters is cut to 200 and followed by `-` and a hash
 * of the path, as the CLI does).
 */
export interface HistoryOptions {
  /**
   * The project directory (the working directory the CLI ran in). Symbolic
   * links are resolved as the CLI resolves them. Without it every project
   * folder is searched (lists return the sessions of all projects).
   *
   * Unlike the official SDK, the sessions of the folder's other git worktrees
   * are not included: pass each worktree's path.
   *
   * @default {undefined}
   */
  readonly dir?: string;
  /**
   * The CLI's configuration folder, the one that holds `projects/`. Pass it
   * when the CLI runs with another `HOME` or `CLAUDE_CONFIG_DIR` than this
   * program (for example `subprocess({ env: { HOME: "/srv/home" } })` keeps
   * its sessions in `/srv/home/.claude`).
   *
   * @default {`$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`}
   */
  readonly configDir?: string;
  /**
   * Stops the operation; it then rejects with the signal's reason. A write
   * (an appended line, a fork's new file) is never left half done.
   *
   * @default {undefined}
   */
  readonly signal?: AbortSignal;
  /**
   * Called with each transcript line that was skipped. Skipped lines are
   * counted in `StoredSessionInfo.skippedLines` either way.
   *
   * @default {undefined}
   */
  readonly onSkip?: (line: SkippedLine) => void;
  /**
   * Read and write the session in this store instead of the CLI's files (the
   * official SDK's `sessionStore`): `listSessions` needs the store's
   * `listSessions`, `deleteSession` its `delete` (without it, deleting is a
   * no-op, as the contract says). The key is `{ projectKey, sessionId }`;
   * `configDir` is not used.
   *
   * @default {undefined}
   */
  readonly sessionStore?: SessionStore;
  /**
   * With `sessionStore`: the project key of the sessions.
   *
   * @default {`projectKeyOf` of `dir` (resolved), else of the current directory, as the SDK derives it}
   */
  readonly projectKey?: string;
}
