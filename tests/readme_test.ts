/**
 * README.md and docs/*.md, checked as they are read on GitHub and on JSR:
 *
 * - each block marked `<!-- example: examples/x.ts -->` is that program of
 *   examples/ (type-checked with the package, run against the real CLI by
 *   the e2e suite), word for word;
 * - every examples/, docs/ and tests/ path they name exists;
 * - every relative link (`[text](path)`, `[text](path#anchor)`, `(#anchor)`)
 *   reaches a file that the package publishes and, with an anchor, one of its
 *   headings (GitHub's slugs, which JSR keeps);
 * - every benchmark figure is checkable: a citation "row 2b" (or "rows 8h,
 *   8i", "rows 1 to 7b", a table's `row` column) names rows that exist in
 *   BENCHMARKS.md, and a paragraph, list item or table row holding a ratio
 *   (`1.23x`) or a µs figure cites one, or says it is "not a row of
 *   BENCHMARKS.md yet";
 * - docs/architecture.md names every entry of deno.json and every folder of
 *   `src/`, `adapters/`, `adapters/subprocess/` and `stores/`.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);

/** A row id of BENCHMARKS.md: `1`, `2b`, `2c'`, a capacity row, `C3`, a soak row, `K6`, or a finding, `F9`. */
const ROW_ID = String.raw`(?:[CFK]\d+|\d+[a-z]?'?)`;
/** "row 2b", "rows 8h, 8i", "rows 3b and 3b'", "rows 1 to 7b", "rows 8a-8f". */
const CITATION = new RegExp(
  String.raw`\b[Rr]ows? (${ROW_ID}(?:(?:,\s*|\s+and\s+|\s+to\s+|-)${ROW_ID})*)(?![\w'])`,
  "g",
);
/** Where a figure says it has no row yet. */
const NO_ROW_YET = /not a row of BENCHMARKS\.md yet/;

/** README.md and every docs/*.md, by their paths from the repository's root. */
async function pages(): Promise<Map<string, string>> {
  const found = new Map([["README.md", await Deno.readTextFile(new URL("README.md", root))]]);
  const docs: string[] = [];
  for await (const entry of Deno.readDir(new URL("docs/", root))) {
    if (entry.isFile && entry.name.endsWith(".md")) docs.push(`docs/${entry.name}`);
  }
  for (const path of docs.sort()) found.set(path, await Deno.readTextFile(new URL(path, root)));
  return found;
}

/** The text outside fenced code blocks, line by line (code lines become empty). */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line;
  });
}

/** GitHub's anchor for a heading's text (github-slugger): lower case, punctuation gone. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link shows its text
    .replace(/`/g, "");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors of a page's headings, duplicates numbered as GitHub does (`x`, `x-1`, …). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The link targets of a page, inline code set aside (it shows brackets, not links). */
function links(markdown: string): string[] {
  const text = prose(markdown).join("\n").replace(/`[^`\n]*`/g, "code");
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

/** A paragraph, list item or table row, and the BENCHMARKS.md rows it cites. */
interface Block {
  text: string;
  cites: string[];
}

/** The row ids a text cites in prose ("row 2b", "rows 8h, 8i"). */
function cited(text: string): string[] {
  return [...text.matchAll(CITATION)].flatMap(([, ids]) => ids!.match(new RegExp(ROW_ID, "g"))!);
}

/**
 * The paragraphs, list items and table rows of a page (a wrapped line joins
 * its block, so a citation may span lines); a table row also cites the ids
 * in its table's `row` column.
 */
function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  let current: string[] = [];
  let rowColumn: number | undefined;
  function end(): void {
    const text = current.join(" ");
    if (text !== "") found.push({ text, cites: cited(text) });
    current = [];
  }
  for (const line of prose(markdown)) {
    if (!line.startsWith("|")) {
      rowColumn = undefined;
      if (line.trim() === "" || /^\s*(?:[-*]|\d+\.)\s/.test(line)) end();
      if (line.trim() !== "") current.push(line.trim());
      continue;
    }
    end();
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    if (rowColumn === undefined) {
      rowColumn = cells.indexOf("row"); // the header
      continue;
    }
    if (/^-+$/.test(cells[0]!)) continue;
    const ids = rowColumn === -1 ? [] : (cells[rowColumn] ?? "").split(/,\s*/);
    found.push({ text: line, cites: [...ids.filter((id) => id !== ""), ...cited(line)] });
  }
  end();
  return found;
}

/** The row ids of BENCHMARKS.md: the first cell of its table rows, and its findings. */
async function benchmarkRows(): Promise<Set<string>> {
  const text = await Deno.readTextFile(new URL("BENCHMARKS.md", root));
  const rows = new Set<string>();
  for (const line of prose(text)) {
    const cell = /^\|\s*([^|]+?)\s*\|/.exec(line)?.[1];
    if (cell && new RegExp(`^${ROW_ID}$`).test(cell)) rows.add(cell);
    const finding = /^#{2,4}\s+(F\d+)\b/.exec(line)?.[1];
    if (finding) rows.add(finding);
  }
  return rows;
}

/** A file's text when it is markdown, `""` for another file, `undefined` when there is none. */
async function contents(path: string): Promise<string | undefined> {
  try {
    const url = new URL(path, root);
    if (!(await Deno.stat(url)).isFile) return undefined;
    return path.endsWith(".md") ? await Deno.readTextFile(url) : "";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

Deno.test("the example blocks of README.md and docs/*.md are the files in examples/", {
  permissions: { read: ["."] },
}, async () => {
  let count = 0;
  for (const [page, text] of await pages()) {
    const found = text.matchAll(/<!-- example: (\S+) -->\n\n```ts ignore\n([\s\S]*?)\n```/g);
    for (const [, path, code] of found) {
      const file = await Deno.readTextFile(new URL(path!, root));
      assert.equal(code, file.trimEnd(), `${page}: the block for ${path} differs from the file`);
      count++;
    }
  }
  assert.ok(count >= 6, `found ${count} example blocks`);
});

Deno.test("README names the pinned Deno version in both commands, as .ci/run does", {
  permissions: { read: ["."] },
}, async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const ci = await Deno.readTextFile(new URL(".ci/run", root));
  assert.match(readme, /npx -y deno@2\.9\.6 task demo/);
  assert.match(readme, /npx -y deno@2\.9\.6 task test/);
  assert.match(readme, /`npx -y deno@2\.9\.6` runs the pinned Deno/, "how npx and deno relate");
  assert.match(ci, /DENO_VERSION=2\.9\.6/);
  assert.match(ci, /deno task test\b/);
});

Deno.test("every examples/, docs/ and tests/ path the pages and the examples name exists", {
  permissions: { read: ["."] },
}, async () => {
  const texts = [...(await pages()).values()];
  for await (const entry of Deno.readDir(new URL("examples/", root))) {
    if (entry.isFile && entry.name.endsWith(".ts")) {
      texts.push(await Deno.readTextFile(new URL(`examples/${entry.name}`, root)));
    }
  }
  const named = new Set<string>();
  for (const text of texts) {
    // Not inside a URL (`…/docs/x`), not a glob (`x_*`), not a file the snippet itself creates.
    for (const [token] of text.matchAll(/(?<![\w/.])(?:examples|docs|tests)\/[\w./*-]*/g)) {
      const path = token.replace(/[./]+$/, "");
      if (path.includes("*") || text.includes(`Deno.create("${path}")`)) continue;
      named.add(path);
    }
  }
  assert.ok(named.size > 10, `found ${named.size} paths`);
  const missing: string[] = [];
  for (const path of named) {
    try {
      await Deno.stat(new URL(path, root));
    } catch {
      missing.push(path);
    }
  }
  assert.deepEqual(missing, [], `paths named that do not exist: ${missing.join(", ")}`);
});

Deno.test("every relative link of the pages reaches a published file and its heading", {
  permissions: { read: ["."] },
}, async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const unpublished: string[] = config.publish?.exclude ?? [];
  const all = await pages();
  const broken: string[] = [];
  let count = 0;
  for (const [page, text] of all) {
    for (const link of links(text)) {
      if (/^[a-z][a-z+.-]*:/i.test(link)) continue; // https:, mailto:
      count++;
      const [path = "", anchor] = link.split("#");
      // JSR sends `/x` to jsr.io/x, not to the repository: links stay relative.
      if (path.startsWith("/")) {
        broken.push(`${page}: ${link} (root-relative)`);
        continue;
      }
      const href = new URL(path, new URL(page, root)).href;
      if (!href.startsWith(root.href)) {
        broken.push(`${page}: ${link} (outside the repository)`);
        continue;
      }
      const target = href.slice(root.href.length);
      const excluded = unpublished.find((entry) =>
        entry.endsWith("/") ? target.startsWith(entry) : target === entry
      );
      if (excluded) broken.push(`${page}: ${link} (not in the package: ${excluded})`);
      const text = all.get(target) ?? await contents(target);
      if (text === undefined) broken.push(`${page}: ${link} (no such file)`);
      else if (anchor !== undefined && !anchors(text).has(anchor)) {
        broken.push(`${page}: ${link} (no heading #${anchor} in ${target})`);
      }
    }
  }
  assert.ok(count > 50, `found ${count} relative links`);
  assert.deepEqual(broken, [], `broken links:\n${broken.join("\n")}`);
});

Deno.test("every BENCHMARKS.md row the pages cite exists, and every ratio cites one", {
  permissions: { read: ["."] },
}, async () => {
  const rows = await benchmarkRows();
  assert.ok(rows.has("2b") && rows.has("8b") && rows.has("F9"), `rows read: ${[...rows]}`);
  const unknown: string[] = [];
  const uncited: string[] = [];
  let count = 0;
  for (const [page, text] of await pages()) {
    for (const id of blocks(text).flatMap((block) => block.cites)) {
      count++;
      if (!rows.has(id)) unknown.push(`${page}: row ${id}`);
    }
    for (const block of blocks(text)) {
      if (!/(?<![\w.])\d+(?:\.\d+)?x\b|µs/.test(block.text)) continue;
      if (block.cites.length > 0 || NO_ROW_YET.test(block.text)) continue;
      uncited.push(`${page}: ${block.text.slice(0, 120)}`);
    }
  }
  assert.ok(count > 30, `found ${count} citations`);
  assert.deepEqual(
    unknown,
    [],
    `rows cited that BENCHMARKS.md does not have:\n${unknown.join("\n")}`,
  );
  assert.deepEqual(uncited, [], `figures that cite no row:\n${uncited.join("\n")}`);
});

Deno.test("docs/architecture.md names every entry and every source folder", {
  permissions: { read: ["."] },
}, async () => {
  const text = await Deno.readTextFile(new URL("docs/architecture.md", root));
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const missing: string[] = [];
  for (const entry of Object.keys(config.exports)) {
    const name = entry === "." ? "@duplex/claude" : `@duplex/claude/${entry.slice(2)}`;
    if (!text.includes(`\`${name}\``)) missing.push(name);
  }
  const folders = ["tests/", "examples/", ".ci/"];
  for (const parent of ["src/", "adapters/", "stores/", "adapters/subprocess/"]) {
    for await (const entry of Deno.readDir(new URL(parent, root))) {
      if (entry.isDirectory) folders.push(`${parent}${entry.name}/`);
    }
  }
  for (const folder of folders) if (!text.includes(`\`${folder}\``)) missing.push(folder);
  assert.deepEqual(missing, [], `not in docs/architecture.md: ${missing.join(", ")}`);
});
