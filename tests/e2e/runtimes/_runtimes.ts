/**
 * Helpers of the "where it runs" tests: which runtimes `.ci/install_runtimes.ts`
 * found, a test registration that skips loudly (or fails on CI) when one is
 * missing, a relay in front of the real CLI, and bundling with `deno bundle`.
 *
 * @module
 */

import { type RelayPolicy, type RelayServer, serveRelay } from "../../../adapters/relay/mod.ts";
import { e2eTest, type Sandbox, withSandbox } from "../_harness.ts";
import type { FakeApiOptions } from "../fake_api.ts";
import { Child } from "./_processes.ts";
import { unavailableTest } from "../../_unavailable.ts";

/** The project root. */
export const ROOT: URL = new URL("../../../", import.meta.url);

/** A file of the project, as a path. */
export function projectPath(relative: string): string {
  return decodeURIComponent(new URL(relative, ROOT).pathname);
}

/** What the installer recorded of one runtime. */
export type RuntimeStatus =
  | { readonly available: true; readonly path: string; readonly version: string }
  | { readonly available: false; readonly reason: string };

/** Names of the runtimes the installer knows. */
export type RuntimeName = "workerd" | "bun" | "node" | "esbuild" | "chromium";

function readStatus(): Record<string, RuntimeStatus> | string {
  try {
    return JSON.parse(Deno.readTextFileSync(projectPath(".cache/runtimes/status.json")));
  } catch (error) {
    return `no status from the installer (${error instanceof Error ? error.message : error}); ` +
      "run `deno task test:e2e`, which runs .ci/install_runtimes.ts first";
  }
}

/**
 * What the installer found for `name`.
 *
 * @param name The runtime.
 * @returns Its binary and version, or why there is none.
 */
export function runtimeStatus(name: RuntimeName): RuntimeStatus {
  const status = readStatus();
  if (typeof status === "string") return { available: false, reason: status };
  return status[name] ?? { available: false, reason: `the installer recorded nothing for ${name}` };
}

/**
 * Registers a test that needs the real CLI and the given runtimes. When a
 * runtime is missing, the test is reported as IGNORED with the reason (and
 * the reason is printed), or, with `CI=true`, it FAILS with it. A missing
 * CLI is reported by `e2eTest` the same way.
 *
 * @param name The test name.
 * @param needs The runtimes it runs.
 * @param fn The test: it gets the CLI's path and each runtime's binary.
 */
export function runtimeTest(
  name: string,
  needs: readonly RuntimeName[],
  fn: (t: Deno.TestContext, cli: string, bin: Readonly<Record<string, string>>) => Promise<void>,
): void {
  const bin: Record<string, string> = {};
  const missing: string[] = [];
  for (const need of needs) {
    const status = runtimeStatus(need);
    if (status.available) bin[need] = status.path;
    else missing.push(`${need}: ${status.reason}`);
  }
  if (missing.length === 0) {
    e2eTest(name, (t, cli) => fn(t, cli, bin));
    return;
  }
  unavailableTest(name, missing.join("; "));
}

/** What {@linkcode withRelay} gives a scenario. */
export interface RelayFixture {
  /** The relay, in front of the real CLI. */
  readonly relay: RelayServer;
  /** The static token it accepts. */
  readonly token: string;
  /** The sandbox: fake API, `HOME` and working folder of the CLI. */
  readonly sandbox: Sandbox;
}

/** Options of {@linkcode withRelay}. */
export interface WithRelayOptions {
  /** Options of the fake Messages API. */
  readonly api?: FakeApiOptions;
  /** The relay's spawn policy. */
  readonly policy?: RelayPolicy;
}

/**
 * Runs `fn` with a relay (static token) in front of the real CLI in a fresh
 * sandbox; always closes the relay (and so every `claude` it runs), the fake
 * API and the folders.
 *
 * @param cli The CLI binary.
 * @param fn The scenario.
 * @param options The fake API's options and the relay's policy.
 * @returns What `fn` returns.
 */
export function withRelay<T>(
  cli: string,
  fn: (fixture: RelayFixture) => Promise<T>,
  options: WithRelayOptions = {},
): Promise<T> {
  return withSandbox(async (sandbox) => {
    const token = crypto.randomUUID();
    await using relay = serveRelay({
      tokens: [token],
      workspace: sandbox.work,
      tenancy: "shared", // the sandbox's HOME
      cli: { binary: cli, env: sandbox.env, hostSignal: "ignore" },
      ...(options.policy && { policy: options.policy }),
    });
    return await fn({ relay, token, sandbox });
  }, options.api);
}

/** Runs a build tool to its end (bounded); throws with its stderr when it fails. */
async function build(what: string, binary: string, args: string[]): Promise<void> {
  const output = await new Deno.Command(binary, {
    args,
    cwd: projectPath("."),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  if (!output.success) {
    throw new Error(`Cannot ${what}: ${new TextDecoder().decode(output.stderr)}`);
  }
}

/**
 * Bundles `entry` with the project's own tooling: `deno bundle --platform
 * browser` (ESM, the package's imports resolved through `deno.json`).
 *
 * @param entry The entry, relative to the project root.
 * @param outFile Where the bundle goes.
 * @returns The bundle's text.
 */
export async function bundle(entry: string, outFile: string): Promise<string> {
  const args = ["bundle", "--quiet", "--platform", "browser", "-o", outFile, projectPath(entry)];
  await build(`bundle ${entry}`, Deno.execPath(), args);
  return await Deno.readTextFile(outFile);
}

/**
 * Compiles a bundle down for an older engine with esbuild (`await using`
 * and `using` become try/finally helpers).
 *
 * @param esbuild The esbuild binary.
 * @param file The bundle.
 * @param outFile Where the result goes.
 * @param target An esbuild target, for example `node22`.
 * @returns The result's text.
 */
export async function lower(
  esbuild: string,
  file: string,
  outFile: string,
  target: string,
): Promise<string> {
  const args = [file, `--target=${target}`, "--format=esm", `--outfile=${outFile}`];
  await build(`compile ${file} down to ${target}`, esbuild, [...args, "--log-level=error"]);
  return await Deno.readTextFile(outFile);
}

/** What the CLI writes into a conversation when a turn is interrupted. */
export const INTERRUPT_MARKER = "[Request interrupted by user]";

/**
 * Whether the CLI recorded an interrupt in the conversation that holds
 * `prompt`: its transcript (`<home>/.claude/projects/<folder>/<session>.jsonl`)
 * has {@linkcode INTERRUPT_MARKER} after the prompt. A CLI that was killed
 * instead writes no such entry.
 *
 * @param home The CLI's `HOME`.
 * @param prompt A prompt of the interrupted turn.
 * @returns True when the interrupt is recorded after the prompt.
 */
export async function interrupted(home: string, prompt: string): Promise<boolean> {
  const projects = `${home}/.claude/projects`;
  for await (const folder of Deno.readDir(projects)) {
    if (!folder.isDirectory) continue;
    for await (const file of Deno.readDir(`${projects}/${folder.name}`)) {
      if (!file.name.endsWith(".jsonl")) continue;
      const text = await Deno.readTextFile(`${projects}/${folder.name}/${file.name}`);
      const at = text.indexOf(JSON.stringify(prompt).slice(1, -1));
      if (at >= 0 && text.indexOf(INTERRUPT_MARKER, at) > at) return true;
    }
  }
  return false;
}

/**
 * A free TCP port on 127.0.0.1 (for a runtime that cannot report the port it
 * chose). Another process could take it before it is used: callers retry.
 *
 * @returns The port.
 */
export function freePort(): number {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return listener.addr.port;
}

/** A temporary folder, removed (with its content) on dispose. */
export interface TempDir extends AsyncDisposable {
  /** Its path. */
  readonly path: string;
}

/**
 * Makes a temporary folder.
 *
 * @param prefix The start of its name.
 * @returns The folder, removed on dispose.
 */
export async function tempDir(prefix = "duplex-runtime-"): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/** What `fixtures/portable_client.ts` reports. */
export interface ClientReport {
  /** The runtime's `navigator.userAgent`. */
  readonly userAgent: string;
  /** The result's text. */
  readonly text: string;
  /** The CLI's session id. */
  readonly sessionId: string;
}

/**
 * Runs a bundle of `fixtures/portable_client.ts` with `binary` (Node, Bun)
 * for one turn, and waits for it to exit by itself (bounded).
 *
 * @param binary The runtime.
 * @param file The bundle.
 * @param fixture The relay.
 * @param prompt The turn's prompt.
 * @returns The exit status, the client's report (when it printed one) and its output.
 */
export async function runClient(
  binary: string,
  file: string,
  { relay, token }: RelayFixture,
  prompt: string,
): Promise<{ status: Deno.CommandStatus; report: ClientReport | undefined; output: string }> {
  await using child = await Child.spawn(binary, {
    args: [file, relay.url, token, prompt],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1" },
  });
  const status = await child.exit(60_000);
  const line = child.stdout.trim().split("\n").at(-1) ?? "";
  return {
    status,
    report: line.startsWith("{") ? JSON.parse(line) : undefined,
    output: child.describe(),
  };
}
