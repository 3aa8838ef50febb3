/*
 * docs/compatibility.md states what the code decides: its window line names
 * `CLI_WINDOW`'s floor and newest, and its feature table has one row per
 * entry of `CLI_FEATURES`, in order, with the same name, use, version and
 * what happens below it. (The README's compatibility table, added from this
 * page, is checked by the same rows when it holds them.)
 */
import assert from "node:assert/strict";
import { CLI_FEATURES, type CliFeature } from "../../src/compat/cli_features.ts";
import { CLI_WINDOW } from "../../src/compat/cli_versions.ts";

const root = new URL("../../", import.meta.url);

/** How a row names what the feature uses. */
function uses(feature: CliFeature): string {
  const u = feature.uses;
  return "flag" in u
    ? `flag \`${u.flag}\``
    : "subtype" in u
    ? `control request \`${u.subtype}\``
    : "field" in u
    ? `initialize reply field \`${u.field}\``
    : "hookEvent" in u
    ? `hook event \`${u.hookEvent}\``
    : `permission mode \`${u.mode}\``;
}

/** The rows the table must have: feature, name, uses, since, below it. */
function expectedRows(): string[][] {
  return Object.entries(CLI_FEATURES).map(([name, feature]) => [
    feature.title,
    `\`${name}\``,
    uses(feature),
    feature.since,
    feature.below.kind === "unsupported"
      ? "`unsupported` error where it is asked for"
      : `degrades: ${feature.below.to}`,
  ]);
}

/** The body rows of the first table whose header starts with `| Feature |` (padded or not). */
function tableRows(markdown: string): string[][] | undefined {
  const lines = markdown.split("\n");
  const header = lines.findIndex((line) => /^\|\s*Feature\s*\|.*\|\s*Since\s*\|/.test(line));
  if (header < 0) return undefined;
  const rows: string[][] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line.trim().slice(1, -1).split(" | ").map((cell) => cell.trim()));
  }
  return rows;
}

Deno.test("docs/compatibility.md names the window and each feature as src/compat decides", async () => {
  const page = await Deno.readTextFile(new URL("docs/compatibility.md", root));
  assert.ok(
    page.includes(
      `Supported: claude **${CLI_WINDOW.floor}** (the floor) to **${CLI_WINDOW.newest}** ` +
        `(the newest tested).`,
    ),
    "the window line",
  );
  assert.deepEqual(tableRows(page), expectedRows());
});

Deno.test("the README's compatibility table agrees too", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const rows = tableRows(readme);
  assert.ok(rows !== undefined, "the README has a compatibility table");
  assert.deepEqual(rows, expectedRows());
  assert.ok(readme.includes(CLI_WINDOW.floor) && readme.includes(CLI_WINDOW.newest));
});
