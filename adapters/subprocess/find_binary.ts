/**
 * Finding the `claude` binary, and turning spawn failures into errors that
 * say what to do.
 *
 * @module
 */

import { DuplexError } from "../../src/errors.ts";

/** How to install the CLI or name it: the second line of every `cli_not_found` message. */
const INSTALL_HINT = "Install it with `npm install -g @anthropic-ai/claude-code`, or give its " +
  "path in the CLAUDE_CLI environment variable or the pathToClaudeCodeExecutable option";

/** How many of PATH's folders a `cli_not_found` message names; the rest are counted. */
const FOLDERS_NAMED = 3;

/** Options of {@linkcode resolveBinary}. */
export interface ResolveBinaryOptions {
  /** A path or a command name to use instead of looking up `CLAUDE_CLI` and `PATH`. */
  readonly binary?: string;
  /**
   * Variables that override the host's environment for the lookup of
   * `CLAUDE_CLI` and `PATH` (a key set to `undefined` counts as unset).
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

type Probe = "found" | "missing" | "not a file" | "not executable" | "unreadable" | "unknown";

/**
 * Finds the program to run as `claude`: the `binary` option, else the
 * `CLAUDE_CLI` environment variable, else `claude` searched on `PATH`. A
 * name without a slash is searched on `PATH`; a path is checked as given
 * (relative to the current directory).
 *
 * Without read permission for the candidates the lookup cannot check them:
 * it then returns the name unchecked and leaves the search to the spawn.
 *
 * @param options Where to look.
 * @returns The path (or, when it could not be checked, the name) to spawn.
 * @throws {DuplexError} `cli_not_found` in two lines: where it looked (the
 * first folders of PATH, the others counted; every path tried is in its
 * `cause`), and how to install or name the CLI; `not_permitted` when the environment cannot be read.
 *
 * @example Find the CLI
 * ```ts ignore
 * import { resolveBinary } from "@duplex/claude/subprocess";
 *
 * const path = await resolveBinary(); // e.g. "/usr/local/bin/claude"
 * ```
 */
export async function resolveBinary(options: ResolveBinaryOptions = {}): Promise<string> {
  let requested: string;
  let source: string;
  if (options.binary !== undefined) {
    requested = options.binary;
    source = "as given";
  } else {
    const fromEnv = readEnv("CLAUDE_CLI", options.env);
    if (fromEnv !== undefined && fromEnv !== "") {
      requested = fromEnv;
      source = "CLAUDE_CLI";
    } else {
      requested = "claude";
      source = "the default name";
    }
  }
  if (typeof requested !== "string" || requested === "") {
    throw new DuplexError(
      "invalid_argument",
      `Cannot find claude: ${source} is empty; pass a path or a command name`,
    );
  }

  if (hasSeparator(requested)) {
    const path = absolute(requested);
    const probe = await probeFile(path);
    if (probe === "missing" || probe === "not a file") {
      throw new DuplexError(
        "cli_not_found",
        `Cannot find claude: ${path}${from(source)} is ${
          probe === "missing" ? "missing" : "not a file"
        }\n${INSTALL_HINT}`,
      );
    }
    // "not executable" is reported by the spawn, with the fix.
    return path;
  }

  const pathVariable = readEnv("PATH", options.env) ?? "";
  const windows = Deno.build.os === "windows";
  const dirs = pathVariable.split(windows ? ";" : ":").filter((dir) => dir !== "");
  const names = candidateNames(requested, options.env);
  const tried: string[] = [];
  const skipped: string[] = [];
  for (const dir of dirs) {
    for (const name of names) {
      const path = join(dir, name);
      tried.push(path);
      const probe = await probeFile(path);
      if (probe === "found") return path;
      // Without read permission nothing can be checked: let the spawn search PATH.
      if (probe === "unknown") return requested;
      if (probe !== "missing") skipped.push(`${path} is ${probe}`);
    }
  }
  const skips = skipped.length === 0 ? "" : `; ${skipped.join(", ")}`;
  throw new DuplexError(
    "cli_not_found",
    `Cannot find claude: no executable "${requested}"${from(source)} on PATH ` +
      `(${searched(dirs)}${skips})\n${INSTALL_HINT}`,
    tried.length === 0 ? {} : { cause: new Error(`Looked for claude at ${tried.join(", ")}`) },
  );
}

/* Where a name came from, for messages: " (from CLAUDE_CLI)", " (as given)", or nothing. */
function from(source: string): string {
  if (source === "the default name") return "";
  return source === "as given" ? ` (${source})` : ` (from ${source})`;
}

/* PATH's folders, named up to a few and counted beyond. */
function searched(dirs: readonly string[]): string {
  if (dirs.length === 0) return "PATH is empty";
  const named = dirs.slice(0, FOLDERS_NAMED).join(", ");
  const more = dirs.length - FOLDERS_NAMED;
  return `searched ${named}${more > 0 ? ` and ${more} more folder${more === 1 ? "" : "s"}` : ""}`;
}

/**
 * Turns an error thrown by `Deno.Command#spawn` into one that says what to do.
 *
 * @param error What the spawn threw.
 * @param program The program that was to run.
 * @param cwd The working directory given, if any.
 * @returns A `DuplexError` for the known cases, else the error unchanged.
 */
export function explainSpawnError(error: unknown, program: string, cwd?: string): unknown {
  if (error instanceof Deno.errors.NotCapable) {
    return new DuplexError(
      "not_permitted",
      `Cannot start claude: Deno is not permitted to run ${program}; ` +
        `run again with --allow-run=${program} (or --allow-run)`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new DuplexError(
      "not_permitted",
      `Cannot start claude: running ${program} was refused; grant --allow-run=${program} ` +
        `and check that the file is executable (chmod +x ${program})`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.NotFound) {
    const place = cwd === undefined ? "" : ` (or the working directory ${cwd} is missing)`;
    return new DuplexError(
      "cli_not_found",
      `Cannot start claude: ${program} was not found${place}\n${INSTALL_HINT}`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Reads a variable, from `overrides` when it has the key, else from the host.
 *
 * @throws {DuplexError} `not_permitted` without `--allow-env` for it.
 */
export function readEnv(
  name: string,
  overrides?: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (overrides !== undefined && Object.hasOwn(overrides, name)) return overrides[name];
  try {
    return Deno.env.get(name);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      throw new DuplexError(
        "not_permitted",
        `Cannot find claude: reading ${name} needs --allow-env=${name}; run again with ` +
          `--allow-env=CLAUDE_CLI,PATH (or --allow-env), or pass pathToClaudeCodeExecutable`,
        { cause: error },
      );
    }
    throw error;
  }
}

function hasSeparator(name: string): boolean {
  return name.includes("/") || (Deno.build.os === "windows" && name.includes("\\"));
}

function absolute(path: string): string {
  if (path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\")) {
    return path;
  }
  try {
    return join(Deno.cwd(), path);
  } catch {
    return path; // no read permission for the current directory: keep it relative
  }
}

function join(dir: string, name: string): string {
  const separator = Deno.build.os === "windows" ? "\\" : "/";
  const trimmed = name.startsWith("./") ? name.slice(2) : name;
  return dir.endsWith("/") || dir.endsWith("\\") ? dir + trimmed : dir + separator + trimmed;
}

function candidateNames(
  name: string,
  overrides?: Readonly<Record<string, string | undefined>>,
): string[] {
  if (Deno.build.os !== "windows" || /\.[^.\\/]+$/.test(name)) return [name];
  let extensions = ".COM;.EXE;.BAT;.CMD";
  try {
    extensions = readEnv("PATHEXT", overrides) ?? extensions;
  } catch {
    // keep the default list
  }
  return extensions.split(";").filter((ext) => ext !== "").map((ext) => name + ext);
}

async function probeFile(path: string): Promise<Probe> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return "not a file";
    if (info.mode !== null && (info.mode & 0o111) === 0) return "not executable";
    return "found";
  } catch (error) {
    // Deno's own permission check: nothing can be checked without --allow-read.
    if (error instanceof Deno.errors.NotCapable) return "unknown";
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return "missing";
    }
    return "unreadable";
  }
}
