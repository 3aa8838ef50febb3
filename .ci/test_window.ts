// deno-lint-ignore-file no-console
/**
 * The support window in CI (`deno task test:window`, a step of `.ci/run`):
 * installs each older CLI version of `.ci/cli_window.ts` (cached in
 * `.cache/claude-cli-versions/<v>/`, as `.ci/install_claude.ts --version=<v>`
 * does) and runs the real-CLI e2e core against it (`CLAUDE_E2E_BIN`). The
 * pinned newest runs the full e2e suite elsewhere (`deno task test:e2e`).
 *
 * Prints one line per version (passed, failed, ignored, seconds) and a
 * closing `N passed, N failed` line; exits 1 when a version failed or could
 * not be installed (with `CI=true`; locally an unavailable version is
 * reported and skipped, as the e2e suite does).
 *
 * Every version is installed before any runs: the compat e2e tests of each
 * run use the others (2.1.300's default mode, 2.1.268 below the floor).
 *
 * Flags: `--versions=2.1.300,2.1.310` runs those instead of the window's
 * older versions; `--files=a,b` runs those files instead of the core;
 * `--install-only` installs the window's older versions and
 * `TEST_ONLY_VERSIONS` and runs nothing (`.ci/run` does it before the full
 * e2e suite, whose compat tests need them).
 * Permissions: `-P=e2e` (it runs npm, each binary and `deno test`).
 *
 * @module
 */

import { installClaude, PATH_FILE, UNAVAILABLE_FILE, versionPrefix } from "./install_claude.ts";
import { CORE_E2E_FILES, OLDER_VERSIONS, TEST_ONLY_VERSIONS } from "./cli_window.ts";

/** What one version's run gave. */
export interface WindowRun {
  readonly version: string;
  /** `ran`: deno test finished (see the counts); `unavailable`: the CLI could not be installed. */
  readonly outcome: "ran" | "unavailable";
  readonly passed: number;
  readonly failed: number;
  readonly ignored: number;
  /** Steps ignored (a feature the version lacks), from the summary's `(N steps)`. */
  readonly ignoredSteps: number;
  readonly exitCode: number;
  readonly seconds: number;
  /** Why it is unavailable, or the summary line. */
  readonly note: string;
}

/**
 * Reads Deno's closing summary, such as
 * `ok | 9 passed (60 steps) | 0 failed | 1 ignored (2 steps) (95s)`.
 *
 * @param output What `deno test` printed.
 * @returns The counts, or `undefined` when there is no summary line.
 */
export function readSummary(
  output: string,
):
  | { line: string; passed: number; failed: number; ignored: number; ignoredSteps: number }
  | undefined {
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const line = plain.split("\n").reverse().find((l) => /^(ok|FAILED) \| \d+ passed/.test(l));
  if (line === undefined) return undefined;
  const count = (pattern: RegExp) => Number(pattern.exec(line)?.[1] ?? 0);
  return {
    line: line.trim(),
    passed: count(/(\d+) passed/),
    failed: count(/(\d+) failed/),
    ignored: count(/(\d+) ignored/),
    ignoredSteps: count(/\d+ ignored \((\d+) steps?\)/),
  };
}

/** The value of `--name=a,b`, split, or `undefined`. */
function listArg(args: readonly string[], name: string): string[] | undefined {
  const arg = args.find((a) => a.startsWith(`--${name}=`));
  return arg?.slice(name.length + 3).split(",").filter((s) => s !== "");
}

async function binaryOf(version: string): Promise<{ path: string } | { why: string }> {
  const prefix = versionPrefix(version);
  await installClaude(prefix, version);
  try {
    return { path: (await Deno.readTextFile(`${prefix}/${PATH_FILE}`)).trim() };
  } catch {
    const why = await Deno.readTextFile(`${prefix}/${UNAVAILABLE_FILE}`).catch(() => "");
    return { why: why.trim() || `no ${PATH_FILE} in ${prefix}` };
  }
}

/**
 * The run of a version that could not be installed.
 *
 * @param version The CLI version.
 * @param why Why (the installer's `UNAVAILABLE` text).
 * @param seconds How long the attempt took.
 * @returns The run, with no test counted.
 */
export function unavailable(version: string, why: string, seconds: number): WindowRun {
  const none = { passed: 0, failed: 0, ignored: 0, ignoredSteps: 0 };
  return { version, outcome: "unavailable", ...none, exitCode: -1, seconds, note: why };
}

/**
 * Runs the core against one version.
 *
 * @param version The CLI version.
 * @param files The e2e files.
 * @returns What it gave.
 */
export async function runVersion(version: string, files: readonly string[]): Promise<WindowRun> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 1000);
  const binary = await binaryOf(version);
  if ("why" in binary) return unavailable(version, binary.why, seconds());
  console.log(`::: claude ${version}: ${files.length} files with CLAUDE_E2E_BIN=${binary.path}`);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--trace-leaks", "-P=e2e", ...files],
    env: { CLAUDE_E2E_BIN: binary.path, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let output = "";
  const pipe = async (stream: ReadableStream<Uint8Array>, to: typeof Deno.stdout) => {
    for await (const chunk of stream) {
      output += decoder.decode(chunk, { stream: true });
      await to.write(chunk);
    }
  };
  const [status] = await Promise.all([
    child.status,
    pipe(child.stdout, Deno.stdout),
    pipe(child.stderr, Deno.stderr),
  ]);
  const summary = readSummary(output);
  return {
    version,
    outcome: "ran",
    passed: summary?.passed ?? 0,
    failed: summary?.failed ?? (status.success ? 0 : 1),
    ignored: summary?.ignored ?? 0,
    ignoredSteps: summary?.ignoredSteps ?? 0,
    exitCode: status.code,
    seconds: seconds(),
    note: summary?.line ?? `no test summary (exit ${status.code})`,
  };
}

/**
 * One line per version, then `N passed, N failed`.
 *
 * @param runs What each version gave.
 * @returns The report.
 */
export function report(runs: readonly WindowRun[]): string {
  const lines = runs.map((run) =>
    run.outcome === "unavailable"
      ? `claude ${run.version}: UNAVAILABLE (${run.note})`
      : `claude ${run.version}: ${run.passed} passed, ${run.failed} failed, ${run.ignored} ignored` +
        ` (${run.ignoredSteps} steps ignored), ${run.seconds} s${
          run.exitCode === 0 ? "" : ` (exit ${run.exitCode})`
        }`
  );
  const passed = runs.reduce((n, run) => n + run.passed, 0);
  // A run that exited non-zero with no failed test listed (a crash, a type error) counts as one;
  // an unavailable version is listed above, and fails the runner under CI=true.
  const failed = runs.reduce(
    (n, run) =>
      n + (run.outcome === "unavailable" || run.exitCode === 0 ? run.failed : run.failed || 1),
    0,
  );
  return [...lines, `${passed} passed, ${failed} failed`].join("\n");
}

if (import.meta.main) {
  const versions = listArg(Deno.args, "versions") ?? [...OLDER_VERSIONS];
  const files = listArg(Deno.args, "files") ?? [...CORE_E2E_FILES];
  const ci = Deno.env.get("CI") === "true";
  const installs = [...new Set([...OLDER_VERSIONS, ...TEST_ONLY_VERSIONS, ...versions])];
  const missing: string[] = [];
  for (const version of installs) {
    const found = await binaryOf(version);
    if ("why" in found) missing.push(`claude ${version}: ${found.why}`);
  }
  if (Deno.args.includes("--install-only")) {
    console.log(missing.length === 0 ? `installed: ${installs.join(", ")}` : missing.join("\n"));
    Deno.exit(missing.length > 0 && ci ? 1 : 0);
  }
  const runs: WindowRun[] = [];
  for (const version of versions) runs.push(await runVersion(version, files));
  console.log(`::: the CLI window\n${report(runs)}`);
  const bad = runs.some((run) =>
    run.outcome === "unavailable" ? ci : run.exitCode !== 0 || run.failed > 0
  );
  Deno.exit(bad ? 1 : 0);
}
