// deno-lint-ignore-file no-console
/**
 * Compares the benchmarks of two commits side by side, in one run: the
 * working tree, or `--head=<commit>`, against a base commit, each checked out
 * into `.cache/bench-base/<commit>` (a git worktree; the working tree is used
 * as it is when no `--head` is given). The two sides alternate, run
 * by run, so that the machine's load drifts over both alike; each run is the
 * ordinary `tests/bench/run.ts` of its own tree. Prints one table: each row's
 * "ours" and ratio, base vs head (medians over the runs), and the change.
 *
 * ```sh
 * deno run -P=bench tests/bench/ab.ts --base=77c302f --only=2,3,4,7 --runs=3
 * deno run -P=bench tests/bench/ab.ts --base=HEAD~3 --rows=2b,3a --smoke
 * ```
 *
 * Flags: `--base=<commit>` (required), `--head=<commit>` (default: the
 * working tree), `--only=<workloads>` (passed on),
 * `--rows=<ids>` (rows to show; default every row both sides printed),
 * `--runs=<n>` (runs per side, default 2), `--smoke`, `--no-cli`, `--no-sdk`,
 * `--rounds=<n>`, `--pool=<parts>` (passed on).
 * The SDK and CLI installs in `.cache/` are shared with the base tree.
 *
 * @module
 */

const ROOT = new URL("../../", import.meta.url).pathname;

interface Options {
  base: string;
  head: string | undefined;
  only: string | undefined;
  rows: Set<string> | undefined;
  runs: number;
  smoke: boolean;
  /** Flags passed on to run.ts as they are (`--no-cli`, `--no-sdk`, `--rounds=<n>`). */
  passOn: string[];
}

function parseOptions(args: readonly string[]): Options {
  const options: Options = {
    base: "",
    head: undefined,
    only: undefined,
    rows: undefined,
    runs: 2,
    smoke: false,
    passOn: [],
  };
  for (const arg of args) {
    const [flag, value] = arg.split("=", 2) as [string, string | undefined];
    if (flag === "--base" && value) options.base = value;
    else if (flag === "--head" && value) options.head = value;
    else if (flag === "--only" && value) options.only = value;
    else if (flag === "--rows" && value) options.rows = new Set(value.split(","));
    else if (flag === "--runs" && value) options.runs = Math.max(1, Number(value));
    else if (flag === "--smoke") options.smoke = true;
    else if (["--no-cli", "--no-sdk", "--rounds", "--pool"].includes(flag)) {
      options.passOn.push(arg);
    } else throw new Error(`Cannot compare: unknown flag ${arg}; see tests/bench/ab.ts`);
  }
  if (!options.base) throw new Error("Cannot compare: pass --base=<commit>");
  return options;
}

async function git(args: string[], cwd = ROOT): Promise<string> {
  const output = await new Deno.Command("git", { args, cwd, stderr: "piped" }).output();
  if (!output.success) {
    throw new Error(`git ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return new TextDecoder().decode(output.stdout).trim();
}

/** Checks the base commit out once, sharing the installs of `.cache/` with it. */
async function baseTree(commit: string): Promise<string> {
  const sha = await git(["rev-parse", "--short", commit]);
  const dir = `${ROOT}.cache/bench-base/${sha}`;
  try {
    await Deno.stat(dir);
  } catch {
    await git(["worktree", "add", "--detach", "--force", dir, sha]);
  }
  await Deno.mkdir(`${dir}/.cache`, { recursive: true });
  for (const shared of ["claude-cli", "bench-sdk"]) {
    try {
      await Deno.symlink(`${ROOT}.cache/${shared}`, `${dir}/.cache/${shared}`);
    } catch {
      // there already, or nothing to share
    }
  }
  return dir;
}

/** One row of a printed table: its id, "ours" and ratio cells. */
interface Cells {
  readonly ours: string;
  readonly ratio: string;
}

async function runBench(cwd: string, options: Options, label: string): Promise<Map<string, Cells>> {
  const args = ["run", "-P=bench", "tests/bench/run.ts"];
  if (options.only) args.push(`--only=${options.only}`);
  if (options.smoke) args.push("--smoke");
  args.push(...options.passOn);
  console.error(`[ab] ${label}: deno ${args.join(" ")} (in ${cwd})`);
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) throw new Error(`Cannot compare: the ${label} run failed:\n${text}`);
  const rows = new Map<string, Cells>();
  for (const line of text.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    // | id | workload | ours | peer | ratio | target | met |
    if (cells.length < 8 || cells[1] === "#" || cells[1]?.startsWith("-")) continue;
    rows.set(cells[1] as string, { ours: cells[3] as string, ratio: cells[5] as string });
  }
  return rows;
}

function firstNumber(text: string): number | undefined {
  const match = /-?\d+(\.\d+)?/.exec(text.replaceAll(",", ""));
  return match ? Number(match[0]) : undefined;
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? sorted[mid]
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function unit(text: string): string {
  return text.replace(/^[-\d.,]+\s*/, "").split(" ")[0] ?? "";
}

function summarise(runs: readonly Map<string, Cells>[], id: string, key: keyof Cells): string {
  const cells = runs.map((run) => run.get(id)?.[key] ?? "");
  const value = median(cells.flatMap((cell) => firstNumber(cell) ?? []));
  return value === undefined ? "" : `${+value.toPrecision(4)}${unit(cells[0] ?? "")}`;
}

function change(base: string, head: string): string {
  const a = firstNumber(base);
  const b = firstNumber(head);
  if (a === undefined || b === undefined || a === 0) return "";
  const pct = ((b - a) / a) * 100;
  return `${pct >= 0 ? "+" : ""}${pct.toFixed(1)} %`;
}

const options = parseOptions(Deno.args);
const baseDir = await baseTree(options.base);
const headDir = options.head === undefined ? ROOT : await baseTree(options.head);
const headSha = await git(["rev-parse", "--short", options.head ?? "HEAD"]);
const dirty = options.head === undefined &&
  (await git(["status", "--porcelain", "--untracked-files=no"])) !== "";
const baseRuns: Map<string, Cells>[] = [];
const headRuns: Map<string, Cells>[] = [];
for (let run = 1; run <= options.runs; run++) {
  // Alternate which side goes first, so that neither always runs on a warmer machine.
  const order = run % 2 === 1 ? ["base", "head"] : ["head", "base"];
  for (const side of order) {
    const rows = await runBench(side === "base" ? baseDir : headDir, options, `${side} run ${run}`);
    (side === "base" ? baseRuns : headRuns).push(rows);
  }
}
const ids = [...new Set([...(baseRuns[0]?.keys() ?? []), ...(headRuns[0]?.keys() ?? [])])]
  .filter((id) => options.rows === undefined || options.rows.has(id));
const headLabel = `${headSha}${dirty ? "+changes" : ""}`;
console.log(`base ${options.base} vs head ${headLabel}, ${options.runs} run(s) each, medians`);
console.log("");
console.log(`| # | ours, base | ours, head | change | ratio, base | ratio, head |`);
console.log(`|---|---|---|---|---|---|`);
for (const id of ids) {
  const oursBase = summarise(baseRuns, id, "ours");
  const oursHead = summarise(headRuns, id, "ours");
  const ratioBase = summarise(baseRuns, id, "ratio");
  const ratioHead = summarise(headRuns, id, "ratio");
  console.log(
    `| ${id} | ${oursBase} | ${oursHead} | ${
      change(oursBase, oursHead)
    } | ${ratioBase} | ${ratioHead} |`,
  );
}
