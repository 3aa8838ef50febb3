// deno-lint-ignore-file no-console
/**
 * The drift watch, `deno task test:latest`: what the newest Claude Code CLI
 * and the newest official SDK on the npm registry changed, in one command.
 *
 * 1. Asks the registry for the newest `@anthropic-ai/claude-code` and
 *    `@anthropic-ai/claude-agent-sdk`, and installs them into
 *    `.cache/latest/` (the pinned installs are only read; a newest CLI that
 *    is the pinned version is run from the pinned install). When the SDK
 *    bundles a newer CLI than the CLI package's latest (its `manifest.json`),
 *    that bundled CLI is the newest.
 * 2. Compares the newest SDK's `sdk.d.ts` with this library's sources and
 *    with the pinned SDK's: frame types, subtypes, control subtypes, hook
 *    events, `query()` options (and their documented defaults), each frame's
 *    fields; and the control subtypes its bundle writes with no public type.
 * 3. Diffs the newest CLI's `--help` flags against the pinned CLI's, and
 *    looks for the flags this library passes that `--help` hides in both
 *    binaries (a hidden flag gone from the newest is reported); diffs the
 *    `type` and `subtype` literals of the two binaries' schemas (what the
 *    CLI reads and writes, its internal frames included).
 * 4. Runs the real-CLI e2e core against the newest CLI (`CLAUDE_E2E_BIN`),
 *    and the SDK parity tests against the newest SDK (`CLAUDE_SDK_PREFIX`).
 *
 * It prints one section per kind of change and writes the same text to
 * `.cache/latest/report.txt`. It is not part of `.ci/run`'s pass/fail (the
 * registry moves): it exits 0 when it ran, drift found or not, and 1 only when
 * it could not run (registry unreachable, an install failed).
 *
 * Flags: `--no-e2e` and `--no-parity` skip those runs (the comparisons alone
 * take seconds).
 *
 * @module
 */

import { CLAUDE_VERSION, DEFAULT_PREFIX } from "./install_claude.ts";
import { installedVersion, SDK_PREFIX, SDK_VERSION } from "../tests/bench/install_sdk.ts";
import { readFolder, readLibrary, readSdk, ROOT } from "./_latest_sources.ts";
import {
  bundleSubtypes,
  helpFlags,
  SCHEMA_PATTERN,
  schemaLiterals,
  sdkCatalogue,
  sourceFlags,
} from "./_latest_catalogue.ts";
import {
  diffCatalogues,
  diffLists,
  type DriftItem,
  failedTests,
  renderReport,
} from "./_latest_diff.ts";
import { compareCliVersions } from "../src/compat/cli_versions.ts";
import {
  bundledCliVersion,
  capture,
  flagsInBinary,
  grepBinary,
  installBundledCli,
  installCli,
  installLatestSdk,
  LATEST_DIR,
  type Outcome,
  registryVersion,
} from "./_latest_install.ts";

/**
 * The e2e core when `.ci/cli_window.ts` (the CLI window's `CORE_E2E_FILES`,
 * which wins) is not there: turns, streaming, permissions (allow, deny,
 * defer), interrupt, hooks, MCP (in-process and external), resume, the
 * pool's spare.
 */
export const E2E_CORE: readonly string[] = [
  "tests/e2e/session_e2e_test.ts",
  "tests/e2e/queue_e2e_test.ts",
  "tests/e2e/control_e2e_test.ts",
  "tests/e2e/hooks_e2e_test.ts",
  "tests/e2e/mcp_external_e2e_test.ts",
  "tests/e2e/pool_e2e_test.ts",
  "tests/e2e/pool_resume_e2e_test.ts",
];

/** The SDK parity tests, pointed at another SDK by `CLAUDE_SDK_PREFIX`. */
export const PARITY_TESTS: readonly string[] = [
  "tests/compat/sdk_drift_test.ts",
  "tests/compat/frame_fields_test.ts", // a frame field the newest SDK types and we do not
  "tests/compat/sdk_surface_test.ts", // an export, method or option not classified in the docs
  "tests/hooks/hooks_test.ts",
  "tests/store/sdk_parity_test.ts",
];

const HELP_TIMEOUT_MS = 30_000;
const TEST_TIMEOUT_MS = 30 * 60_000;

function fail(why: string): never {
  console.error(`test:latest could not run: ${why}`);
  Deno.exit(1);
}

function must(outcome: Outcome): string {
  return outcome.ok ? outcome.text : fail(outcome.why);
}

/** The pinned SDK's prefix: `.cache/bench-sdk` when it holds it, else one under `.cache/latest/`. */
async function pinnedSdkPrefix(): Promise<string> {
  const bench = `${ROOT}/${SDK_PREFIX}`;
  if ((await installedVersion(bench)) === SDK_VERSION) return bench;
  return must(await installLatestSdk(ROOT, SDK_VERSION));
}

/** Runs `deno test` on files; a failure of its own is one item. */
async function runTests(
  section: string,
  files: readonly string[],
  options: {
    readonly permissions: string;
    readonly env: Record<string, string>;
    readonly log: string;
  },
): Promise<DriftItem[]> {
  const args = ["test", "--trace-leaks", options.permissions, ...files];
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    // CI=true: a test whose component is missing fails here instead of being ignored.
    env: { ...options.env, CI: "true", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
  });
  console.error(`Running deno ${args.join(" ")} (log: ${options.log})…`);
  const output = await child.output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  await Deno.writeTextFile(options.log, text);
  if (output.success) return [];
  const failures = failedTests(text);
  if (failures.length > 0) return failures.map((name) => ({ section, name, note: "failed" }));
  const tail = text.trim().split("\n").slice(-3).join(" | ");
  return [{ section, name: `deno test (exit ${output.code})`, note: `no failure listed: ${tail}` }];
}

/** The window's core list when there is one, else {@linkcode E2E_CORE}; files that exist. */
async function coreFiles(): Promise<string[]> {
  const window = "./cli_window.ts"; // not a static import: the window's list, when it is there
  let files = [...E2E_CORE];
  try {
    const module = await import(window) as { CORE_E2E_FILES?: readonly string[] };
    if (module.CORE_E2E_FILES) files = [...module.CORE_E2E_FILES];
  } catch {
    // No window list: ours.
  }
  return files.filter((file) => {
    try {
      return Deno.statSync(`${ROOT}/${file}`).isFile;
    } catch {
      return false;
    }
  });
}

/** The newest CLI: the SDK's bundled one when it is newer than the CLI package's latest. */
interface NewestCli {
  readonly version: string;
  readonly path: string;
  /** Where it came from, for the report's title. */
  readonly source: string;
}

async function newestCli(sdkVersion: string, sdkPrefix: string): Promise<NewestCli> {
  const latest = must(await registryVersion("@anthropic-ai/claude-code"));
  const bundled = await bundledCliVersion(sdkPrefix);
  if (bundled !== undefined && compareCliVersions(bundled, latest) > 0) {
    const path = must(await installBundledCli(ROOT, sdkVersion, bundled));
    const source =
      `bundled with SDK ${sdkVersion}; @anthropic-ai/claude-code's latest is ${latest}`;
    return { version: bundled, path, source };
  }
  const path = must(await installCli(ROOT, latest, `${ROOT}/${DEFAULT_PREFIX}`));
  return { version: latest, path, source: "@anthropic-ai/claude-code's latest" };
}

/** The two CLIs' `--help` flags, the hidden flags this library passes, their schemas' literals. */
async function compareClis(
  pinned: string,
  newest: string,
  versions: { readonly pinned: string; readonly newest: string },
): Promise<DriftItem[]> {
  const used = sourceFlags(readFolder("adapters/subprocess"));
  const pinnedFlags = helpFlags(must(await capture(pinned, ["--help"], HELP_TIMEOUT_MS)));
  const newestFlags = helpFlags(must(await capture(newest, ["--help"], HELP_TIMEOUT_MS)));
  const items = diffLists(
    "CLI flags",
    { pinned: pinnedFlags, newest: newestFlags, used },
    versions,
  );
  // The flags this library passes that --help does not list: still in the newest binary?
  const hidden = used.filter((flag) => !pinnedFlags.includes(flag) && !newestFlags.includes(flag));
  const inBinary = async (path: string) => must(await flagsInBinary(path, hidden)).split("\n");
  items.push(
    ...diffLists("CLI flags", {
      pinned: await inBinary(pinned),
      newest: await inBinary(newest),
      used,
    }, versions).map((item) => ({ ...item, note: `${item.note}, a flag --help hides` })),
  );
  const schemas = async (path: string) =>
    schemaLiterals(must(await grepBinary(path, SCHEMA_PATTERN)));
  const [before, after] = [await schemas(pinned), await schemas(newest)];
  for (const key of ["types", "subtypes"] as const) {
    const label = (name: string) => `${key.slice(0, -1)} ${name}`;
    items.push(
      ...diffLists("CLI schemas", {
        pinned: before[key].map(label),
        newest: after[key].map(label),
      }, versions),
    );
  }
  return items;
}

async function main(): Promise<void> {
  const args = new Set(Deno.args);
  const sdkVersion = must(await registryVersion("@anthropic-ai/claude-agent-sdk"));
  const newestSdk = must(await installLatestSdk(ROOT, sdkVersion));
  const pinnedSdk = await pinnedSdkPrefix();
  const cli = await newestCli(sdkVersion, newestSdk);
  const pinnedCli = must(await installCli(ROOT, CLAUDE_VERSION, `${ROOT}/${DEFAULT_PREFIX}`));

  const newestFiles = readSdk(newestSdk);
  const pinnedFiles = readSdk(pinnedSdk);
  const sdkVersions = { pinned: SDK_VERSION, newest: sdkVersion };
  const items: DriftItem[] = [
    ...diffCatalogues({
      newest: sdkCatalogue(newestFiles.dts),
      pinned: sdkCatalogue(pinnedFiles.dts),
      known: readLibrary(),
    }, sdkVersions),
    ...diffLists("bundle-only subtypes", {
      pinned: bundleSubtypes(pinnedFiles.mjs),
      newest: bundleSubtypes(newestFiles.mjs),
    }, sdkVersions),
    ...await compareClis(pinnedCli, cli.path, { pinned: CLAUDE_VERSION, newest: cli.version }),
  ];

  const notes = new Map<string, string[]>();
  const logs = `${ROOT}/${LATEST_DIR}`;
  if (args.has("--no-e2e")) {
    notes.set("e2e core", ["skipped (--no-e2e)"]);
  } else {
    const core = await coreFiles();
    notes.set("e2e core", [`${core.length} files against ${cli.path}`]);
    items.push(
      ...await runTests("e2e core", core, {
        permissions: "-P=e2e",
        env: { CLAUDE_E2E_BIN: cli.path },
        log: `${logs}/e2e-${cli.version}.log`,
      }),
    );
  }
  if (args.has("--no-parity")) {
    notes.set("SDK parity tests", ["skipped (--no-parity)"]);
  } else {
    notes.set("SDK parity tests", [`${PARITY_TESTS.join(", ")} against ${sdkVersion}`]);
    items.push(
      ...await runTests("SDK parity tests", PARITY_TESTS, {
        permissions: "-P",
        env: { CLAUDE_SDK_PREFIX: newestSdk },
        log: `${logs}/parity-${sdkVersion}.log`,
      }),
    );
  }
  const title =
    `Drift: CLI ${CLAUDE_VERSION} (pinned) -> ${cli.version} (newest: ${cli.source}), ` +
    `SDK ${SDK_VERSION} (pinned) -> ${sdkVersion} (newest)`;
  const report = renderReport(title, items, notes);
  await Deno.writeTextFile(`${logs}/report.txt`, `${report}\n`);
  console.log(report);
}

if (import.meta.main) {
  await main();
}
