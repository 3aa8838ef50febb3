// deno-lint-ignore-file no-console -- a command-line program: its output is its job
/**
 * `deno task doctor`: prints why a session would not start here, one line
 * per check (see `doctor()`), and exits 1 when a check fails (2 for a
 * wrong command line).
 *
 * ```sh
 * deno task doctor
 * deno task doctor -- --binary=/opt/claude/bin/claude --cwd=/srv/project
 * deno task doctor -- --isolation=bubblewrap
 * RELAY_TOKEN=… deno task doctor -- --relay=wss://relay.example/v1 --token-env=RELAY_TOKEN
 * ```
 *
 * The relay's token is read from the variable `--token-env` names, never
 * from the command line (where `ps` shows it).
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { doctor, type DoctorOptions, formatDoctorReport } from "./doctor.ts";

const USAGE = `Usage: deno task doctor -- [--binary=<path>] [--cwd=<dir>] ` +
  `[--isolation=none|bubblewrap] [--relay=<ws url> --token-env=<VAR> [--origin=<origin>]] ` +
  `[--timeout-ms=<n>] [--json]`;

/** What the command line asks for. */
export type DoctorCommand =
  | { readonly kind: "run"; readonly options: DoctorOptions; readonly json: boolean }
  | { readonly kind: "help" }
  | { readonly kind: "wrong"; readonly message: string };

/**
 * Reads the command line.
 *
 * @param args The arguments after the program.
 * @param env Reads a variable (for `--token-env`).
 * @returns What to do.
 */
export function parseDoctorArgs(
  args: readonly string[],
  env: (name: string) => string | undefined,
): DoctorCommand {
  const values = new Map<string, string>();
  let json = false;
  for (const arg of args) {
    if (arg === "--help" || arg === "-h") return { kind: "help" };
    if (arg === "--json") {
      json = true;
      continue;
    }
    const match = /^--([a-z-]+)=(.*)$/s.exec(arg);
    if (match === null) return { kind: "wrong", message: `Unknown argument ${arg}` };
    const [, name = "", value = ""] = match;
    if (name === "token") {
      return {
        kind: "wrong",
        message: "Pass the relay's token in a variable and name it with --token-env=<VAR>: a " +
          "command line is visible to every user of the host (ps)",
      };
    }
    if (
      !["binary", "cwd", "isolation", "relay", "token-env", "origin", "timeout-ms"].includes(name)
    ) {
      return { kind: "wrong", message: `Unknown option --${name}` };
    }
    values.set(name, value);
  }
  const isolation = values.get("isolation");
  if (isolation !== undefined && isolation !== "none" && isolation !== "bubblewrap") {
    return { kind: "wrong", message: `--isolation takes none or bubblewrap, got ${isolation}` };
  }
  const timeout = values.get("timeout-ms");
  const timeoutMs = timeout === undefined ? undefined : Number(timeout);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    return { kind: "wrong", message: `--timeout-ms takes a positive whole number, got ${timeout}` };
  }
  const url = values.get("relay");
  const tokenEnv = values.get("token-env");
  let relay: DoctorOptions["relay"];
  if (url !== undefined) {
    if (tokenEnv === undefined || tokenEnv === "") {
      return {
        kind: "wrong",
        message: "--relay needs --token-env=<VAR>: the variable that holds its token",
      };
    }
    const token = env(tokenEnv);
    if (token === undefined || token === "") {
      return { kind: "wrong", message: `--token-env names ${tokenEnv}, which is not set` };
    }
    const origin = values.get("origin");
    relay = { url, token, ...(origin !== undefined && { origin }) };
  } else if (tokenEnv !== undefined || values.has("origin")) {
    return { kind: "wrong", message: "--token-env and --origin go with --relay=<url>" };
  }
  const binary = values.get("binary");
  const cwd = values.get("cwd");
  return {
    kind: "run",
    json,
    options: {
      ...(binary !== undefined && { binary }),
      ...(cwd !== undefined && { cwd }),
      ...(isolation !== undefined && { isolation }),
      ...(relay !== undefined && { relay }),
      ...(timeoutMs !== undefined && { timeoutMs }),
    },
  };
}

function readVariable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const command = parseDoctorArgs(Deno.args, readVariable);
  if (command.kind === "help") {
    console.log(USAGE);
    return 0;
  }
  if (command.kind === "wrong") {
    console.error(`${command.message}\n${USAGE}`);
    return 2;
  }
  try {
    const report = await doctor(command.options);
    console.log(command.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
    return report.ok ? 0 : 1;
  } catch (error) {
    console.error(`The doctor could not finish: ${messageOf(error)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main());
