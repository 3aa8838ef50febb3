/**
 * The drift watch's comparisons and its report (`.ci/test_latest.ts`): what
 * the newest SDK declares against what this library knows and what the
 * pinned SDK declared; the newest CLI's flags against the pinned CLI's; the
 * failures a `deno test` run printed. Pure functions over catalogues and
 * text, tested on fixed inputs (`tests/compat/latest_diff_test.ts`).
 *
 * @module
 */

import type { Catalogue } from "./_latest_catalogue.ts";

/** One change a maintainer may have to act on. */
export interface DriftItem {
  /** The report section: `frame types`, `subtypes`, `control subtypes`, … */
  readonly section: string;
  /** What changed: a name, with its frame for a subtype or field. */
  readonly name: string;
  /** What kind of change, in a few words. */
  readonly note: string;
}

/** The sections of the report, in order. */
export const SECTIONS = [
  "frame types",
  "subtypes",
  "control subtypes",
  "hook events",
  "options",
  "fields",
  "bundle-only subtypes",
  "CLI flags",
  "CLI schemas",
  "e2e core",
  "SDK parity tests",
] as const;

/**
 * Compares one category: names the newest side has that this library does
 * not know (`new in <newest>` when the pinned side lacked them too), and names
 * the pinned side had that the newest dropped.
 *
 * @param section The report section.
 * @param names The three sides' names.
 * @param versions The pinned and newest versions, for the notes.
 * @returns The items, newest-first order kept.
 */
export function compareNames(
  section: string,
  names: {
    readonly newest: readonly string[];
    readonly pinned: readonly string[];
    readonly known: readonly string[];
  },
  versions: { readonly pinned: string; readonly newest: string },
): DriftItem[] {
  const items: DriftItem[] = [];
  for (const name of names.newest) {
    if (names.known.includes(name)) continue;
    const note = names.pinned.includes(name)
      ? `not known here (already in ${versions.pinned})`
      : `new in ${versions.newest}, not known here`;
    items.push({ section, name, note });
  }
  for (const name of names.pinned) {
    if (names.newest.includes(name)) continue;
    const note = names.known.includes(name)
      ? `removed in ${versions.newest} (known here)`
      : `removed in ${versions.newest}`;
    items.push({ section, name, note });
  }
  return items;
}

function subtypeNames(catalogue: Catalogue): string[] {
  return [...catalogue.frames].flatMap(([type, subtypes]) => subtypes.map((s) => `${type}/${s}`));
}

/**
 * Everything the newest SDK changed: against this library (types, subtypes,
 * control subtypes, hook events, options) and against the pinned SDK (the
 * same, plus each frame's and control request's fields and the options'
 * documented defaults).
 *
 * @param sides The newest SDK's, the pinned SDK's and this library's catalogues.
 * @param versions The pinned and newest SDK versions.
 * @returns The items, by section.
 */
export function diffCatalogues(
  sides: { readonly newest: Catalogue; readonly pinned: Catalogue; readonly known: Catalogue },
  versions: { readonly pinned: string; readonly newest: string },
): DriftItem[] {
  const { newest, pinned, known } = sides;
  const items = [
    ...compareNames("frame types", {
      newest: [...newest.frames.keys()],
      pinned: [...pinned.frames.keys()],
      known: [...known.frames.keys()],
    }, versions),
    ...compareNames("subtypes", {
      newest: subtypeNames(newest),
      pinned: subtypeNames(pinned),
      known: subtypeNames(known),
    }, versions),
    ...compareNames("control subtypes", {
      newest: newest.controlSubtypes,
      pinned: pinned.controlSubtypes,
      known: known.controlSubtypes,
    }, versions),
    ...compareNames("hook events", {
      newest: newest.hookEvents,
      pinned: pinned.hookEvents,
      known: known.hookEvents,
    }, versions),
    ...compareNames("options", {
      newest: newest.options,
      pinned: pinned.options,
      known: known.options,
    }, versions),
  ];
  if (newest.hookEvents.join() !== pinned.hookEvents.join()) {
    const order = newest.hookEvents.filter((e) => pinned.hookEvents.includes(e)).join();
    if (order !== pinned.hookEvents.filter((e) => newest.hookEvents.includes(e)).join()) {
      items.push({ section: "hook events", name: "HOOK_EVENTS", note: "order changed" });
    }
  }
  for (const [name, value] of newest.defaults) {
    const before = pinned.defaults.get(name);
    if (before !== undefined && before !== value && pinned.options.includes(name)) {
      items.push({ section: "options", name, note: `default ${before} -> ${value}` });
    }
  }
  for (const [frame, fields] of newest.fields) {
    const before = pinned.fields.get(frame);
    if (before === undefined) continue;
    const names = (list: readonly string[]) => list.map((field) => `${frame}.${field}`);
    items.push(...diffLists("fields", { pinned: names(before), newest: names(fields) }, versions));
  }
  return items;
}

/**
 * The frame fields the SDK types and this library does not: for each frame of
 * the SDK's catalogue (`type` or `type/subtype`; control requests are not
 * frames), every field missing from the library's frame of that key (or of
 * its `type`, for a library frame typed once for all its subtypes, as
 * `result` is) and not in `leftOut`; a frame the library lacks altogether; and
 * each `leftOut` entry that is no longer needed (the SDK dropped the field,
 * or the library now has it), so the list cannot rot.
 *
 * @param sides The SDK's and this library's catalogues.
 * @param leftOut Fields left out on purpose, as `frame.field`, each with its reason.
 * @returns The items, in the SDK's order (section `fields`).
 */
export function frameFieldGaps(
  sides: { readonly sdk: Catalogue; readonly known: Catalogue },
  leftOut: ReadonlyMap<string, string> = new Map(),
): DriftItem[] {
  const items: DriftItem[] = [];
  const needed = new Set<string>();
  for (const [frame, fields] of sides.sdk.fields) {
    if (frame.startsWith("control/")) continue;
    const ours = sides.known.fields.get(frame) ?? sides.known.fields.get(frame.split("/")[0]!);
    if (ours === undefined) {
      items.push({ section: "fields", name: frame, note: "frame not typed here" });
      continue;
    }
    for (const field of fields) {
      const name = `${frame}.${field}`;
      if (ours.includes(field)) continue;
      if (leftOut.has(name)) needed.add(name);
      else items.push({ section: "fields", name, note: "typed by the SDK, not here" });
    }
  }
  for (const name of leftOut.keys()) {
    if (!needed.has(name)) {
      items.push({ section: "fields", name, note: "left out on purpose, but no longer missing" });
    }
  }
  return items;
}

/**
 * Compares two sorted lists that have no library side (the bundles'
 * subtypes, the CLIs' flags): what the newest added and removed, and which
 * removed names the library still uses.
 *
 * @param section The report section.
 * @param lists The pinned and newest lists, and the names the library uses.
 * @param versions The pinned and newest versions.
 * @returns The items.
 */
export function diffLists(
  section: string,
  lists: {
    readonly pinned: readonly string[];
    readonly newest: readonly string[];
    readonly used?: readonly string[];
  },
  versions: { readonly pinned: string; readonly newest: string },
): DriftItem[] {
  const items: DriftItem[] = [];
  for (const name of lists.newest) {
    if (!lists.pinned.includes(name)) {
      items.push({ section, name, note: `new in ${versions.newest}` });
    }
  }
  for (const name of lists.pinned) {
    if (lists.newest.includes(name)) continue;
    const used = lists.used?.includes(name) ?? false;
    items.push({
      section,
      name,
      note: `removed in ${versions.newest}${used ? " (this library passes it)" : ""}`,
    });
  }
  return items;
}

/**
 * The failed tests and steps a `deno test` run lists in its `FAILURES`
 * summary (`name => file:line:col`, a step as `test ... step`).
 *
 * @param output The run's stdout and stderr, without colors.
 * @returns Each failure's name and place.
 */
export function failedTests(output: string): string[] {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => line.trim() === "FAILURES");
  if (start < 0) return [];
  const failures: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^(ok|FAILED) \|/.test(line.trim())) break;
    if (line.includes(" => ")) failures.push(line.trim());
  }
  return failures;
}

/**
 * The report: a heading per section, each item on a line, `no change` for an
 * empty section, and a closing count.
 *
 * @param title The first line (the versions compared).
 * @param items Every item.
 * @param notes Lines per section printed before its items (what ran, what was skipped).
 * @returns The text to print.
 */
export function renderReport(
  title: string,
  items: readonly DriftItem[],
  notes: ReadonlyMap<string, readonly string[]> = new Map(),
): string {
  const out = [title, ""];
  for (const section of SECTIONS) {
    const own = items.filter((item) => item.section === section);
    out.push(`## ${section}`);
    for (const note of notes.get(section) ?? []) out.push(`   ${note}`);
    if (own.length === 0) out.push("   no change");
    const width = Math.max(0, ...own.map((item) => item.name.length));
    for (const item of own) out.push(` - ${item.name.padEnd(width)}  ${item.note}`);
    out.push("");
  }
  out.push(`${items.length} item(s) of drift.`);
  return out.join("\n");
}
