/**
 * `doctor()`: why a session would not start on this host, and what to do,
 * in a few lines. Each check looks at one thing a start needs (the
 * binary, its version, credentials, Deno's permissions, the working
 * directory, the CLI's config folder, `bwrap` for the sandbox, a relay and
 * its token) and says `ok`, `warn` or `fail`, what it found, and the fix.
 * The probes are in `_doctor_local.ts` (this host), `_doctor_credentials.ts`,
 * `_doctor_bubblewrap.ts` and `_doctor_relay.ts` (a relay); every probe is bounded and reaps what it starts
 * (`_doctor_run.ts`). `deno task doctor` is `doctor_main.ts`.
 *
 * @module
 */

import {
  checkBinary,
  checkConfig,
  checkCwd,
  checkPermissions,
  checkVersion,
  hostEnv,
} from "./_doctor_local.ts";
import { checkCredentials } from "./_doctor_credentials.ts";
import { checkBubblewrap } from "./_doctor_bubblewrap.ts";
import { checkRelay } from "./_doctor_relay.ts";
import type { DoctorContext } from "./_doctor_context.ts";

/** What a check concluded. */
export type DoctorStatus = "ok" | "warn" | "fail";

/** The checks, in the order the doctor runs and prints them. */
export const DOCTOR_CHECKS: readonly DoctorCheckName[] = [
  "binary",
  "version",
  "credentials",
  "permissions",
  "cwd",
  "config",
  "bubblewrap",
  "relay",
  "relay-token",
  "relay-origin",
];

/**
 * The name of a check: `binary` (which `claude` a session runs), `version`
 * (it against the supported window), `credentials` (an API key or a
 * login), `permissions` (Deno's, against what a start needs), `cwd` (the
 * working directory), `config` (the CLI's config folder, where it keeps
 * sessions), `bubblewrap` (with `isolation: "bubblewrap"`), `relay` (its
 * `/health`), `relay-token` (the WebSocket upgrade with the token),
 * `relay-origin` (with `relay.origin`: the origin a browser page sends).
 */
export type DoctorCheckName =
  | "binary"
  | "version"
  | "credentials"
  | "permissions"
  | "cwd"
  | "config"
  | "bubblewrap"
  | "relay"
  | "relay-token"
  | "relay-origin";

/** One line of the doctor's report. */
export type DoctorCheck =
  | {
    readonly check: DoctorCheckName;
    readonly status: "ok";
    /** What it found. */
    readonly finding: string;
  }
  | {
    readonly check: DoctorCheckName;
    readonly status: "warn" | "fail";
    /** What it found. */
    readonly finding: string;
    /** What to do. */
    readonly fix: string;
  };

/** What {@linkcode doctor} found. */
export interface DoctorReport {
  /** False when any check failed: a session would not start. */
  readonly ok: boolean;
  /** One entry per check that applies, in {@linkcode DOCTOR_CHECKS} order. */
  readonly checks: readonly DoctorCheck[];
}

/** Options of {@linkcode doctor}: the ones of the session it checks for. */
export interface DoctorOptions {
  /**
   * The binary (a path, or a name searched on `PATH`), as
   * `pathToClaudeCodeExecutable`; default: `CLAUDE_CLI`, else `claude` on `PATH`.
   */
  readonly binary?: string;
  /** The session's working directory. @default {Deno.cwd()} */
  readonly cwd?: string;
  /**
   * The CLI's environment, as the subprocess option `env` (it replaces the
   * host's): where the credentials and the config folder are looked for.
   * Default: the host's.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Check `bwrap` for `isolation: "bubblewrap"`. @default {"none"} */
  readonly isolation?: "none" | "bubblewrap";
  /**
   * A relay to check: its WebSocket URL, a token (never printed), and
   * optionally the origin of the page that will connect (`https://app.example`).
   */
  readonly relay?: {
    readonly url: string;
    readonly token: string;
    readonly origin?: string;
  };
  /** The bound of each probe, in milliseconds. @default {10000} */
  readonly timeoutMs?: number;
  /** Aborting it stops the doctor (every probe killed, reaped) with its reason. */
  readonly signal?: AbortSignal;
}

/** The default bound of each probe. */
const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Checks what a session needs to start, and says what to do about what is missing.
 *
 * @param options The session's binary, working directory, environment,
 * isolation and relay.
 * @returns One line per check that applies; `ok` is false when one failed.
 * @throws The signal's reason when it aborts.
 *
 * @example Ask why a session would not start
 * ```ts ignore
 * import { doctor, formatDoctorReport } from "@duplex/claude/subprocess";
 *
 * const report = await doctor({ cwd: "/path/to/project" });
 * console.log(formatDoctorReport(report));
 * // ok    binary       /usr/local/bin/claude (on PATH)
 * // ok    version      claude 2.1.332, in the supported window 2.1.300 to 2.1.332
 * // fail  credentials  no API key or login …  →  set ANTHROPIC_API_KEY …
 * ```
 */
export async function doctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  options.signal?.throwIfAborted();
  const env = options.env ?? hostEnv();
  const context: DoctorContext = {
    binary: options.binary,
    cwd: options.cwd ?? currentDir(),
    env,
    envGiven: options.env !== undefined,
    isolation: options.isolation ?? "none",
    relay: options.relay,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    signal: options.signal,
  };
  const checks: DoctorCheck[] = [];
  const binary = await checkBinary(context);
  checks.push(binary.check);
  const version = binary.path === undefined ? undefined : await checkVersion(context, binary.path);
  if (version !== undefined) checks.push(version);
  checks.push(await checkCredentials(context));
  checks.push(checkPermissions(context, binary.path));
  checks.push(await checkCwd(context));
  checks.push(await checkConfig(context));
  if (context.isolation === "bubblewrap") checks.push(await checkBubblewrap(context));
  if (context.relay !== undefined) checks.push(...await checkRelay(context));
  return { ok: checks.every((check) => check.status !== "fail"), checks };
}

/**
 * The report as text, one line per check: the status, the check, what it
 * found, and after `→` what to do.
 *
 * @param report What {@linkcode doctor} returned.
 * @returns The lines, joined with `\n`.
 */
export function formatDoctorReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((check) => check.check.length));
  return report.checks.map((check) => {
    const head = `${check.status.padEnd(4)}  ${check.check.padEnd(width)}  ${check.finding}`;
    return check.status === "ok" ? head : `${head}  →  ${check.fix}`;
  }).join("\n");
}

function currentDir(): string {
  try {
    return Deno.cwd();
  } catch {
    return "."; // not permitted to read it: the permissions line says so
  }
}
