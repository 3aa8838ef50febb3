/**
 * The doctor's checks of this host: the binary (`resolveBinary`), its
 * version against the window (`claude --version`, bounded), Deno's
 * permissions against what a start needs, the working directory, the CLI's
 * config folder. The `credentials` line is `_doctor_credentials.ts`,
 * `bubblewrap` is `_doctor_bubblewrap.ts`.
 *
 * @module
 */

import { DuplexError, excerptOf } from "../../src/errors.ts";
import {
  CLI_WINDOW,
  type CliVersion,
  compareCliVersions,
  parseCliVersion,
} from "../../src/compat/cli_versions.ts";
import {
  CLI_FEATURES,
  type CliFeatureName,
  featureLabel,
  hasFeature,
} from "../../src/compat/cli_features.ts";
import { explainSpawnError, resolveBinary } from "./find_binary.ts";
import { configPaths } from "./_doctor_credentials.ts";
import { runBounded } from "./_doctor_run.ts";
import type { DoctorCheck } from "./doctor.ts";
import type { DoctorContext } from "./_doctor_context.ts";

/** How to install a CLI in the window. */
const INSTALL = `npm install -g @anthropic-ai/claude-code@${CLI_WINDOW.newest}`;

/**
 * The host's environment, or undefined when Deno may not read it.
 *
 * @returns The variables.
 */
export function hostEnv(): Record<string, string> | undefined {
  try {
    return Deno.env.toObject();
  } catch {
    return undefined;
  }
}

/**
 * A message's finding and its advice: split at its line break, or before "; <verb> …".
 *
 * @param message An error's message.
 * @returns The two parts (the message's "Cannot …: " left out).
 */
export function splitAdvice(message: string): { finding: string; fix: string } {
  const text = message.replace(/^Cannot [^:]+: /, "");
  const newline = text.indexOf("\n");
  if (newline >= 0) return { finding: text.slice(0, newline), fix: text.slice(newline + 1) };
  const match = /; (?=(?:run|install|pass|create|use|grant|check|give)\b)/.exec(text);
  if (match === null) return { finding: text, fix: "see the finding" };
  return { finding: text.slice(0, match.index), fix: text.slice(match.index + 2) };
}

/**
 * Whether Deno grants a permission now (a "prompt" is not a grant).
 *
 * @param descriptor The permission.
 * @returns True when granted.
 */
export function granted(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/**
 * The `binary` line, and the path found.
 *
 * @param context The doctor's context.
 * @returns The line; `path` when a session would run something (a path, or a name unchecked).
 */
export async function checkBinary(
  context: DoctorContext,
): Promise<{ check: DoctorCheck; path: string | undefined }> {
  const env = context.env;
  const lookupEnv = context.envGiven && env !== undefined
    ? { CLAUDE_CLI: env.CLAUDE_CLI, PATH: env.PATH }
    : undefined;
  try {
    const path = await resolveBinary({
      ...(context.binary !== undefined && { binary: context.binary }),
      ...(lookupEnv !== undefined && { env: lookupEnv }),
    });
    if (!path.includes("/")) {
      return {
        path,
        check: {
          check: "binary",
          status: "warn",
          finding: `${path}: not looked for, Deno may not read PATH's folders`,
          fix: "run with --allow-read to find it before a start (else the spawn searches PATH)",
        },
      };
    }
    const source = context.binary !== undefined
      ? "as given"
      : env?.CLAUDE_CLI
      ? "from CLAUDE_CLI"
      : "on PATH";
    return { path, check: { check: "binary", status: "ok", finding: `${path} (${source})` } };
  } catch (error) {
    if (!(error instanceof DuplexError)) throw error;
    return {
      path: undefined,
      check: { check: "binary", status: "fail", ...splitAdvice(error.message) },
    };
  }
}

/**
 * The `version` line: `<binary> --version` against the support window.
 *
 * @param context The doctor's context.
 * @param path The binary found.
 * @returns The line.
 */
export async function checkVersion(context: DoctorContext, path: string): Promise<DoctorCheck> {
  if (!granted({ name: "run", command: path })) {
    return {
      check: "version",
      status: "warn",
      finding: `not asked: Deno may not run ${path}`,
      fix: `run with --allow-run=${path} (see the permissions line)`,
    };
  }
  const ran = await runBounded(path, ["--version"], {
    env: context.envGiven ? definedOf(context.env ?? {}) : undefined,
    timeoutMs: context.timeoutMs,
    signal: context.signal,
  });
  const isClaude = `check that ${path} is Claude Code (\`claude --version\` prints ` +
    `\`${CLI_WINDOW.newest} (Claude Code)\`), or install it: ${INSTALL}`;
  if (ran.state === "not_started") {
    const explained = explainSpawnError(ran.error, path);
    const message = explained instanceof Error ? explained.message : ran.message;
    return { check: "version", status: "fail", ...splitAdvice(message) };
  }
  if (ran.state === "timed_out") {
    return {
      check: "version",
      status: "fail",
      finding: `${path} --version did not answer within ${ran.ms} ms`,
      fix: isClaude,
    };
  }
  const said = excerptOf((ran.stderr.trim() || ran.stdout.trim()).split("\n")[0] ?? "", 160);
  if (ran.code !== 0) {
    return {
      check: "version",
      status: "fail",
      finding: `${path} --version exited with code ${ran.code}${said ? `: ${said}` : ""}`,
      fix: isClaude,
    };
  }
  const version = parseCliVersion(ran.stdout);
  if (version === undefined) {
    return {
      check: "version",
      status: "fail",
      finding: `${path} --version printed no version${said ? ` (${said})` : ""}`,
      fix: isClaude,
    };
  }
  const window = `${CLI_WINDOW.floor} to ${CLI_WINDOW.newest}`;
  if (compareCliVersions(version, CLI_WINDOW.floor) < 0) {
    return {
      check: "version",
      status: "fail",
      finding: `claude ${version.text} is older than ${CLI_WINDOW.floor}, the oldest this ` +
        `library supports: a session refuses to start on it`,
      fix: `install one from ${window}: ${INSTALL}`,
    };
  }
  if (compareCliVersions(version, CLI_WINDOW.newest) > 0) {
    return {
      check: "version",
      status: "warn",
      finding: `claude ${version.text} is newer than ${CLI_WINDOW.newest}, the newest tested: ` +
        `it should work; a flag it dropped fails with its stderr, a new frame arrives as unknown`,
      fix: `if a session misbehaves, install the tested one: ${INSTALL}`,
    };
  }
  const lacks = lackedFeatures(version);
  if (lacks.length > 0) {
    return {
      check: "version",
      status: "warn",
      finding: `claude ${version.text} is in the supported window ${window}, and lacks ` +
        lacks.join(", "),
      fix: `to use them, install a newer one: ${INSTALL}`,
    };
  }
  return {
    check: "version",
    status: "ok",
    finding: `claude ${version.text}, in the supported window ${window}`,
  };
}

/**
 * The features of the library a CLI version lacks (`src/compat/cli_features.ts`).
 *
 * @param version The version.
 * @returns Each, as `<title> (<flag>) from <since>`, with what it degrades to.
 */
export function lackedFeatures(version: CliVersion): string[] {
  const names = Object.keys(CLI_FEATURES) as CliFeatureName[];
  return names.filter((name) => hasFeature(name, version) === false).map((name) => {
    const feature = CLI_FEATURES[name];
    const degrades = feature.below.kind === "degrades" ? `; degrades to ${feature.below.to}` : "";
    return `${featureLabel(feature)} from ${feature.since}${degrades}`;
  });
}

function definedOf(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}

/** One permission a start needs and the process lacks. */
interface Lack {
  readonly flag: string;
  readonly why: string;
  /** Whether a start fails without it (else only some options need it). */
  readonly needed: boolean;
}

/**
 * The `permissions` line: Deno's permissions against what a start needs.
 *
 * @param context The doctor's context.
 * @param binary The binary found, if any.
 * @returns The line.
 */
export function checkPermissions(context: DoctorContext, binary: string | undefined): DoctorCheck {
  const lacks: Lack[] = [];
  const has: string[] = [];
  const program = binary ?? context.binary ?? "claude";
  function need(descriptor: Deno.PermissionDescriptor, what: string, lack: Lack): void {
    if (granted(descriptor)) has.push(what);
    else lacks.push(lack);
  }
  need({ name: "run", command: program }, `run ${program}`, {
    flag: `--allow-run=${program}`,
    why: `run ${program}`,
    needed: true,
  });
  if (!context.envGiven) {
    need({ name: "env" }, "read the environment", {
      flag: "--allow-env",
      why: "pass the environment on to the CLI (or pass env)",
      needed: true,
    });
  }
  need({ name: "read", path: context.cwd }, `read ${context.cwd}`, {
    flag: `--allow-read=${context.cwd}`,
    why: `check ${context.cwd} and find the binary before the spawn`,
    needed: false,
  });
  const temp = context.env?.TMPDIR?.trim() || "/tmp";
  need({ name: "write", path: temp }, `write ${temp}`, {
    flag: `--allow-write=${temp}`,
    why: `write private files in ${temp} (settings, agents or MCP servers given as objects, ` +
      `the pool's parked spares, a resume from a sessionStore)`,
    needed: false,
  });
  const folder = configPaths(context.env ?? {}).folder;
  if (folder !== undefined) {
    need({ name: "write", path: folder }, `write ${folder}`, {
      flag: `--allow-write=${folder}`,
      why: `edit saved sessions in ${folder} (@duplex/claude/history)`,
      needed: false,
    });
  }
  const relay = context.relay === undefined ? undefined : hostOf(context.relay.url);
  if (relay !== undefined) {
    need({ name: "net", host: relay }, `connect to ${relay}`, {
      flag: `--allow-net=${relay}`,
      why: `connect to the relay at ${relay}`,
      needed: true,
    });
  }
  if (lacks.length === 0) {
    return { check: "permissions", status: "ok", finding: `Deno may ${has.join(", ")}` };
  }
  return {
    check: "permissions",
    status: lacks.some((lack) => lack.needed) ? "fail" : "warn",
    finding: `Deno may not ${lacks.map((lack) => lack.why).join("; nor ")}`,
    fix: `run with ${flagsOf(lacks)}`,
  };
}

/* The flags, one per permission: `--allow-write=/tmp,/home/me/.claude`. */
function flagsOf(lacks: readonly Lack[]): string {
  const values = new Map<string, string[]>();
  for (const { flag } of lacks) {
    const [name = flag, value] = flag.split("=", 2);
    const list = values.get(name) ?? [];
    if (value !== undefined) list.push(value);
    values.set(name, list);
  }
  return [...values].map(([name, list]) => list.length ? `${name}=${list.join(",")}` : name)
    .join(" ");
}

/** A URL's `host:port`, or undefined for one that does not parse. */
export function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (/^(wss|https):$/.test(parsed.protocol) ? "443" : "80");
    return `${parsed.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/**
 * The `cwd` line: the working directory exists and is a directory.
 *
 * @param context The doctor's context.
 * @returns The line.
 */
export async function checkCwd(context: DoctorContext): Promise<DoctorCheck> {
  const cwd = context.cwd;
  try {
    const info = await Deno.stat(cwd);
    if (info.isDirectory) return { check: "cwd", status: "ok", finding: `${cwd} is a directory` };
    return {
      check: "cwd",
      status: "fail",
      finding: `${cwd} is not a directory`,
      fix: "pass a directory as cwd",
    };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return {
        check: "cwd",
        status: "fail",
        finding: `${cwd} does not exist`,
        fix: "create it or pass another cwd",
      };
    }
    return {
      check: "cwd",
      status: "warn",
      finding: `${cwd} not checked: Deno may not look at it`,
      fix: `run with --allow-read=${cwd}`,
    };
  }
}

/**
 * The `config` line: the CLI's config folder, where it keeps its sessions
 * (a resume needs the same one), is a folder this user may write.
 *
 * @param context The doctor's context.
 * @returns The line.
 */
export async function checkConfig(context: DoctorContext): Promise<DoctorCheck> {
  if (context.env === undefined) {
    return {
      check: "config",
      status: "warn",
      finding: "not checked: Deno may not read the environment",
      fix: "run with --allow-env (or pass env)",
    };
  }
  const { folder, from } = configPaths(context.env);
  if (folder === undefined) {
    return {
      check: "config",
      status: "fail",
      finding: "neither CLAUDE_CONFIG_DIR nor HOME is set: the CLI has no folder for its " +
        "settings and sessions",
      fix: "set HOME (or CLAUDE_CONFIG_DIR) in the CLI's environment",
    };
  }
  const named = `${folder} (from ${from})`;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(folder);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { check: "config", status: "ok", finding: `${named} is made at the first run` };
    }
    return {
      check: "config",
      status: "warn",
      finding: `${named} not checked: Deno may not look at it`,
      fix: `run with --allow-read=${folder}`,
    };
  }
  if (!info.isDirectory) {
    return {
      check: "config",
      status: "fail",
      finding: `${named} is not a folder`,
      fix: "remove it, or set CLAUDE_CONFIG_DIR to a folder of yours",
    };
  }
  const uid = userId();
  const mode = info.mode ?? 0o700;
  const writable = uid === undefined || uid === 0 ||
    (info.uid === uid ? (mode & 0o200) !== 0 : (mode & 0o002) !== 0);
  if (!writable) {
    return {
      check: "config",
      status: "fail",
      finding: `${named} is not writable by this user: the CLI cannot save its sessions there ` +
        `(a resume then fails)`,
      fix: `make it yours and writable (chown, chmod u+w), or set CLAUDE_CONFIG_DIR to a folder ` +
        `of yours`,
    };
  }
  return { check: "config", status: "ok", finding: `${named} is a folder` };
}

function userId(): number | undefined {
  try {
    return Deno.uid() ?? undefined;
  } catch {
    return undefined; // not permitted (--allow-sys=uid): the mode is not judged
  }
}
