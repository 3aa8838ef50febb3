/**
 * The public surface of the official SDK, as names, read from its
 * `sdk.d.ts`: every top-level export, the methods of `Query` (and of
 * `WarmQuery` and `SpareProcess`), and the fields of `Options`; and the
 * classification tables of `docs/comparison.md` that say, for each name,
 * what this library has. Pure functions over text, tested on fixed inputs in
 * `sdk_surface_test.ts` before they are used on the SDK.
 *
 * @module
 */

import { blankComments } from "../../.ci/_latest_dts.ts";
import { sdkCatalogue } from "../../.ci/_latest_catalogue.ts";

/** The SDK's names, by category. */
export interface SdkSurface {
  /** Every top-level `export declare` name (functions, types, interfaces, classes, consts). */
  readonly exports: readonly string[];
  /** The methods of `Query`, `WarmQuery` and `SpareProcess`, as `Query.name`. */
  readonly methods: readonly string[];
  /** The fields of `Options`. */
  readonly options: readonly string[];
}

const EXPORT =
  /^export declare (?:abstract )?(?:function|type|interface|const|class|enum|namespace) ([A-Za-z_$][\w$]*)/gm;

/**
 * Reads the surface from the text of `sdk.d.ts`.
 *
 * @param dts The declarations.
 * @returns The names, each list sorted.
 */
export function sdkSurface(dts: string): SdkSurface {
  const code = blankComments(dts, false);
  const exports = new Set<string>();
  for (const match of code.matchAll(EXPORT)) exports.add(match[1]!);
  const methods = new Set<string>();
  for (const owner of ["Query", "WarmQuery", "SpareProcess"]) {
    for (const name of interfaceMethods(code, owner)) methods.add(`${owner}.${name}`);
  }
  return {
    exports: [...exports].sort(),
    methods: [...methods].sort(),
    options: [...sdkCatalogue(dts).options].sort(),
  };
}

/** The method names of an exported interface (its own members written `name(` or `name<`). */
function interfaceMethods(code: string, name: string): string[] {
  const start = code.search(new RegExp(`^export declare interface ${name}\\b[^{]*\\{`, "m"));
  if (start < 0) return [];
  let i = code.indexOf("{", start) + 1;
  let depth = 1;
  let line = "";
  const names: string[] = [];
  for (; i < code.length && depth > 0; i++) {
    const c = code[i]!;
    if (depth === 1) line += c;
    if (c === "{" || c === "(" || c === "[") depth++;
    else if (c === "}" || c === ")" || c === "]") depth--;
    if (depth === 1 && (c === ";" || c === "\n")) {
      const match = line.match(/^\s*(?:readonly\s+)?([A-Za-z_$][\w$]*)\s*[<(]/);
      if (match) names.push(match[1]!);
      line = "";
    }
  }
  return [...new Set(names)];
}

/** How this library stands against one SDK name. */
export type Standing = "yes" | "different" | "no";

/** One row of a classification table. */
export interface ClassifiedRow {
  /** The SDK names the row classifies (the backticked names of its first cell). */
  readonly names: readonly string[];
  /** Its standing (the second cell). */
  readonly standing: Standing;
  /** What this library has (the third cell, as written). */
  readonly ours: string;
  /** Why, where it is not plainly the same (the fourth cell). */
  readonly reason: string;
}

const STANDINGS: readonly string[] = ["yes", "different", "no"];

/**
 * Reads the rows of the Markdown tables under a `##` heading: the first cell's
 * backticked names, the second cell's standing, the third and fourth as
 * written. The header and delimiter rows are skipped.
 *
 * @param markdown The document.
 * @param heading The heading's text, without the `## `.
 * @returns The rows, and the lines whose standing is not one of the three.
 */
export function classifiedRows(
  markdown: string,
  heading: string,
): { rows: ClassifiedRow[]; malformed: string[] } {
  const lines = markdown.split("\n");
  const at = lines.indexOf(`## ${heading}`);
  const rows: ClassifiedRow[] = [];
  const malformed: string[] = [];
  if (at < 0) return { rows, malformed: [`no heading "## ${heading}"`] };
  for (const line of lines.slice(at + 1)) {
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|") || /^\|\s*-/.test(line)) continue;
    const cells = line.slice(1, line.endsWith("|") ? -1 : undefined).split(/(?<!\\)\|/).map((
      cell,
    ) => cell.trim());
    const [first = "", standing = "", ours = "", reason = ""] = cells;
    const names = [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if (names.length === 0) continue; // the header row
    if (!STANDINGS.includes(standing)) {
      malformed.push(line);
      continue;
    }
    if (standing !== "yes" && reason === "") {
      malformed.push(`${line} (a "${standing}" needs its reason)`);
      continue;
    }
    rows.push({ names, standing: standing as Standing, ours, reason });
  }
  return { rows, malformed };
}

/**
 * Compares the SDK's names with the classified ones.
 *
 * @param sdk The SDK's names of one category.
 * @param rows The rows classifying them.
 * @returns The SDK names no row classifies, the row names the SDK does not
 *   have (stale rows), and the names classified twice.
 */
export function unclassified(
  sdk: readonly string[],
  rows: readonly ClassifiedRow[],
): { missing: string[]; stale: string[]; twice: string[] } {
  const seen = new Map<string, number>();
  for (const row of rows) for (const name of row.names) seen.set(name, (seen.get(name) ?? 0) + 1);
  const known = new Set(sdk);
  return {
    missing: sdk.filter((name) => !seen.has(name)),
    stale: [...seen.keys()].filter((name) => !known.has(name)),
    twice: [...seen].filter(([, count]) => count > 1).map(([name]) => name),
  };
}
