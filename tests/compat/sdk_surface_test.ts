/**
 * The type-level parity test: every name the official SDK's `sdk.d.ts`
 * exports, every method of its `Query` and every field of its `Options` is
 * classified in `docs/comparison.md` (yes / different / no, with a reason
 * where it is not yes), and each `yes` is true of this library: an export
 * of that name, a `DuplexSession` method of that name, an option of that
 * name. A new name in the SDK that CI installs (`tests/bench/install_sdk.ts`,
 * or `CLAUDE_SDK_PREFIX`) fails here until it is classified.
 *
 * The readers are tested on fixed inputs first, so a reader that finds
 * nothing cannot make the comparison pass.
 *
 * @module
 */

import assert from "node:assert/strict";
import { unavailableTest } from "../_unavailable.ts";
import { installedVersion, SDK_VERSION, sdkPackageDir, sdkPrefix } from "../bench/install_sdk.ts";
import { readProject, ROOT } from "../../.ci/_latest_sources.ts";
import { DuplexSession } from "../../mod.ts";
import { type ClassifiedRow, classifiedRows, sdkSurface, unclassified } from "./_sdk_surface.ts";

const COMPARISON = "docs/comparison.md";
const SECTIONS = {
  exports: "Every export of the SDK",
  methods: "`Query`, method by method",
  options: "From the official SDK: option by option",
} as const;

Deno.test("the surface readers, on fixed inputs", async (t) => {
  await t.step("sdkSurface reads exports, interface methods and Options fields", () => {
    const dts = [
      "/** a doc with export declare function hidden(): void; */",
      "export declare function query(_p: { prompt: string }): Query;",
      "export declare type Options = {",
      "    /** The folder. */",
      "    cwd?: string;",
      "    hooks?: Partial<Record<string, unknown[]>>;",
      "};",
      "export declare const HOOK_EVENTS: readonly ['A'];",
      "export declare interface Query extends AsyncGenerator<unknown, void> {",
      "    /** Interrupts. */",
      "    interrupt(): Promise<void>;",
      "    setModel(model?: string): Promise<void>;",
      "    getContextUsage(opts?: {",
      "        detail?: 'summary';",
      "    }): Promise<unknown>;",
      "    readonly label: string;",
      "}",
      "export declare class AbortError extends Error {",
      "}",
    ].join("\n");
    const surface = sdkSurface(dts);
    assert.deepEqual(surface.exports, ["AbortError", "HOOK_EVENTS", "Options", "Query", "query"]);
    assert.deepEqual(surface.methods, [
      "Query.getContextUsage",
      "Query.interrupt",
      "Query.setModel",
    ]);
    assert.deepEqual(surface.options, ["cwd", "hooks"]);
  });

  await t.step("classifiedRows reads a table under its heading, and refuses bad rows", () => {
    const markdown = [
      "## Other",
      "| `x` | yes | no | |",
      "## The table",
      "",
      "| SDK | here | ours | reason |",
      "| --- | --- | --- | --- |",
      "| `a`, `b` | yes | `a()` | |",
      "| `c` | no | | the CLI has it \\| elsewhere |",
      "| `d` | maybe | | |",
      "| `e` | different | `E` | |",
      "## Next",
      "| `f` | yes | | |",
    ].join("\n");
    const { rows, malformed } = classifiedRows(markdown, "The table");
    assert.deepEqual(rows.map((row) => [row.names, row.standing]), [
      [["a", "b"], "yes"],
      [["c"], "no"],
    ]);
    assert.equal(malformed.length, 2);
    assert.deepEqual(classifiedRows(markdown, "Absent").malformed, ['no heading "## Absent"']);
  });

  await t.step("unclassified finds missing, stale and twice-listed names", () => {
    const rows: ClassifiedRow[] = [
      { names: ["a", "b"], standing: "yes", ours: "", reason: "" },
      { names: ["b", "z"], standing: "no", ours: "", reason: "r" },
    ];
    assert.deepEqual(unclassified(["a", "b", "c"], rows), {
      missing: ["c"],
      stale: ["z"],
      twice: ["b"],
    });
  });
});

const prefix = sdkPrefix();
const version = await installedVersion(prefix);
const NAME = "every export, Query method and option of the SDK is classified in docs/comparison.md";

if (version === undefined) {
  unavailableTest(
    NAME,
    `the official SDK ${SDK_VERSION} is not installed in ${prefix}: ` +
      "run deno run -P=install tests/bench/install_sdk.ts",
  );
} else {
  Deno.test(NAME, async (t) => {
    const surface = sdkSurface(await Deno.readTextFile(`${sdkPackageDir(prefix)}/sdk.d.ts`));
    const markdown = readProject(COMPARISON);
    const ours = await ourExports();

    const read = (section: keyof typeof SECTIONS) => {
      const { rows, malformed } = classifiedRows(markdown, SECTIONS[section]);
      assert.deepEqual(malformed, [], `malformed rows in "${SECTIONS[section]}"`);
      const gaps = unclassified(surface[section], rows);
      assert.deepEqual(
        gaps,
        { missing: [], stale: [], twice: [] },
        `${section} of the SDK ${version} against "${SECTIONS[section]}" in ${COMPARISON}`,
      );
      return rows;
    };

    await t.step("exports: every name classified; each yes is exported here", () => {
      const notOurs = read("exports").filter((row) => row.standing === "yes")
        .flatMap((row) => row.names).filter((name) => !ours.names.has(name));
      assert.deepEqual(notOurs, [], "classified yes but not exported by any entry");
    });

    await t.step("methods: every one classified; each session.name( named is a method", () => {
      const methods = new Set<string>();
      for (let proto = DuplexSession.prototype; proto; proto = Object.getPrototypeOf(proto)) {
        for (const name of Object.getOwnPropertyNames(proto)) methods.add(name);
      }
      const rows = read("methods");
      const missing = rows.flatMap((row) =>
        [...row.ours.matchAll(/session\.([A-Za-z]+)\(/g)].map((m) => m[1]!)
      ).filter((name) => !methods.has(name));
      assert.deepEqual(missing, [], "named in the methods table but not on DuplexSession");
      const unnamed = rows.filter((row) => row.standing !== "no" && !/session\./.test(row.ours));
      assert.deepEqual(unnamed, [], "a yes or different row names no session method");
      const renamed = rows.filter((row) =>
        row.standing === "yes" &&
        row.names.some((name) => !row.ours.includes(`session.${name.split(".")[1]}(`))
      );
      assert.deepEqual(renamed, [], "a yes row whose method has another name here");
    });

    await t.step("options: every one classified; each yes is an option here", () => {
      const missing = read("options").filter((row) => row.standing === "yes")
        .flatMap((row) => row.names).filter((name) => !ours.options.has(name));
      assert.deepEqual(missing, [], "classified yes but no option of start() or subprocess()");
    });
  });
}

/** The names every entry of deno.json exports, and the options of start() and subprocess(). */
async function ourExports(): Promise<{ names: Set<string>; options: Set<string> }> {
  const config = JSON.parse(readProject("deno.json")) as { exports: Record<string, string> };
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...Object.values(config.exports)],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  const doc = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    nodes: Record<string, { symbols?: DocSymbol[] }>;
  };
  const names = new Set<string>();
  const interfaces = new Map<string, DocSymbol>();
  for (const file of Object.values(doc.nodes)) {
    for (const symbol of file.symbols ?? []) {
      names.add(symbol.name);
      if (symbol.declarations?.some((d) => d.kind === "interface")) {
        interfaces.set(symbol.name, symbol);
      }
    }
  }
  const options = new Set<string>();
  const walk = (name: string, seen: Set<string>) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const declaration of interfaces.get(name)?.declarations ?? []) {
      for (const property of declaration.def?.properties ?? []) options.add(property.name);
      for (const parent of declaration.def?.extends ?? []) {
        walk(parent.repr.replace(/<.*$/, ""), seen);
      }
    }
  };
  for (const root of ["DuplexSessionOptions", "SubprocessOptions"]) walk(root, new Set());
  assert.ok(options.size > 50, `read only ${options.size} options from deno doc`);
  return { names, options };
}

interface DocSymbol {
  name: string;
  declarations?: {
    kind: string;
    def?: { properties?: { name: string }[]; extends?: { repr: string }[] };
  }[];
}
