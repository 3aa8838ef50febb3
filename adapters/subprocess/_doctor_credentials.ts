/**
 * The doctor's `credentials` line: whether the CLI will find an API key or
 * a login, looked for where Claude Code 2.1.332 looks (read from its code),
 * in this order:
 *
 * - variables: `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`,
 *   `CLAUDE_CODE_OAUTH_TOKEN`; a cloud provider (`CLAUDE_CODE_USE_BEDROCK`,
 *   `_VERTEX`, `_FOUNDRY`: its own credentials, not checked here);
 * - an `apiKeyHelper` in the settings: the managed
 *   `/etc/claude-code/managed-settings.json`, the user's
 *   `<config folder>/settings.json`, the project's `.claude/settings.json`
 *   and `.claude/settings.local.json`;
 * - a login: `claudeAiOauth` in `<config folder>/.credentials.json`, or a
 *   key saved by `/login` (`primaryApiKey`) in the config file
 *   (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`).
 *
 * The config folder is `CLAUDE_CONFIG_DIR`, else `~/.claude`. No value is
 * ever printed, not even a part: only where it was found.
 *
 * @module
 */

import { isRecord } from "../../src/_values.ts";
import type { DoctorCheck } from "./doctor.ts";
import type { DoctorContext } from "./_doctor_context.ts";

/** The variables that carry a credential themselves. */
const KEY_VARIABLES = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"];

/** The variables that send the CLI to a cloud provider, with that provider's credentials. */
const PROVIDER_VARIABLES = [
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
  "CLAUDE_CODE_USE_FOUNDRY",
];

/** The managed settings file (Linux). */
const MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json";

/** Where the CLI keeps its files, for an environment. */
export interface ConfigPaths {
  /** The config folder: `CLAUDE_CONFIG_DIR`, else `$HOME/.claude`; undefined without either. */
  readonly folder: string | undefined;
  /** Which variable named it. */
  readonly from: "CLAUDE_CONFIG_DIR" | "HOME" | undefined;
  /** The config file (`.claude.json`). */
  readonly file: string | undefined;
}

/**
 * Where the CLI keeps its config folder and file.
 *
 * @param env The CLI's environment.
 * @returns The paths.
 */
export function configPaths(env: Readonly<Record<string, string | undefined>>): ConfigPaths {
  const dir = env.CLAUDE_CONFIG_DIR?.trim();
  if (dir) return { folder: dir, from: "CLAUDE_CONFIG_DIR", file: `${dir}/.claude.json` };
  const home = env.HOME?.trim();
  if (home) return { folder: `${home}/.claude`, from: "HOME", file: `${home}/.claude.json` };
  return { folder: undefined, from: undefined, file: undefined };
}

const NO_ENV_FIX = "run with --allow-env (or pass env: the CLI's environment)";

/**
 * The `credentials` line.
 *
 * @param context The doctor's context.
 * @returns The line.
 */
export async function checkCredentials(context: DoctorContext): Promise<DoctorCheck> {
  const env = context.env;
  if (env === undefined) {
    return {
      check: "credentials",
      status: "warn",
      finding: "not checked: Deno may not read the environment",
      fix: NO_ENV_FIX,
    };
  }
  for (const name of KEY_VARIABLES) {
    if (env[name]?.trim()) {
      return { check: "credentials", status: "ok", finding: `${name} is set (not shown)` };
    }
  }
  for (const name of PROVIDER_VARIABLES) {
    const value = env[name]?.trim();
    if (value && value !== "0" && value.toLowerCase() !== "false") {
      return {
        check: "credentials",
        status: "ok",
        finding: `${name} is set: the CLI uses that provider's credentials (not checked here)`,
      };
    }
  }
  const paths = configPaths(env);
  const unreadable: string[] = [];
  const settings = [
    MANAGED_SETTINGS,
    ...(paths.folder === undefined ? [] : [`${paths.folder}/settings.json`]),
    `${context.cwd}/.claude/settings.json`,
    `${context.cwd}/.claude/settings.local.json`,
  ];
  for (const file of settings) {
    // A managed file Deno may not read is rare enough not to hold the verdict.
    const json = await readJson(file, file === MANAGED_SETTINGS ? [] : unreadable);
    if (isRecord(json) && typeof json.apiKeyHelper === "string" && json.apiKeyHelper.trim()) {
      return { check: "credentials", status: "ok", finding: `an apiKeyHelper in ${file}` };
    }
  }
  if (paths.folder !== undefined) {
    const file = `${paths.folder}/.credentials.json`;
    const json = await readJson(file, unreadable);
    const login = isRecord(json) ? json.claudeAiOauth : undefined;
    if (isRecord(login) && (isText(login.accessToken) || isText(login.refreshToken))) {
      return { check: "credentials", status: "ok", finding: `a login in ${file} (not shown)` };
    }
  }
  if (paths.file !== undefined) {
    const json = await readJson(paths.file, unreadable);
    if (isRecord(json) && isText(json.primaryApiKey)) {
      return {
        check: "credentials",
        status: "ok",
        finding: `an API key saved by /login in ${paths.file} (not shown)`,
      };
    }
  }
  if (unreadable.length > 0) {
    return {
      check: "credentials",
      status: "warn",
      finding: `no API key found, and Deno may not read ${unreadable.join(", ")}`,
      fix: `run with --allow-read for them to check a login there, or set ANTHROPIC_API_KEY`,
    };
  }
  if (Deno.build.os === "darwin") {
    return {
      check: "credentials",
      status: "warn",
      finding: "no API key in the environment or the settings; a login on macOS is in the " +
        "keychain, which the doctor cannot read",
      fix: "if a session says it is not logged in: run `claude` once and log in with /login, " +
        "or set ANTHROPIC_API_KEY",
    };
  }
  const where = paths.folder === undefined ? "no HOME or CLAUDE_CONFIG_DIR" : paths.folder;
  return {
    check: "credentials",
    status: "fail",
    finding: `no API key or login: no ANTHROPIC_API_KEY, no apiKeyHelper in the settings, ` +
      `no login in ${where}`,
    fix: "set ANTHROPIC_API_KEY in the CLI's environment, or run `claude` once and log in " +
      "with /login",
  };
}

function isText(value: unknown): boolean {
  return typeof value === "string" && value.trim() !== "";
}

/* A file's JSON; undefined when it is missing or not JSON; notes a file Deno may not read. */
async function readJson(path: string, unreadable: string[]): Promise<unknown> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) unreadable.push(path);
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
