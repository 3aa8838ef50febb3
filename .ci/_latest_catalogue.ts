/**
 * What one side of the drift watch (`.ci/test_latest.ts`) knows, as names: a
 * {@linkcode Catalogue} read from the official SDK's `sdk.d.ts`, or from this
 * library's sources; the control subtypes the SDK's bundle (`sdk.mjs`) sends
 * with no public type; the flags of a CLI's `--help`. Pure functions over
 * text (the caller reads the files), so each is tested on fixed inputs
 * (`tests/compat/latest_diff_test.ts`).
 *
 * @module
 */

import {
  type Declaration,
  declarations,
  literals,
  literalsOf,
  resolve,
  type Shape,
} from "./_latest_dts.ts";

/** The names a side knows, by category. */
export interface Catalogue {
  /** The frame types (`type` of the message union), with the subtypes of each (`[]`: none). */
  readonly frames: ReadonlyMap<string, readonly string[]>;
  /** The control request subtypes, both directions. */
  readonly controlSubtypes: readonly string[];
  /** The hook events. */
  readonly hookEvents: readonly string[];
  /** The options (of `query()` for the SDK; of `start()` and `subprocess()` here). */
  readonly options: readonly string[];
  /** The `@default` of each option that documents one. */
  readonly defaults: ReadonlyMap<string, string>;
  /** The fields of each frame (`type` or `type/subtype`) and control request (`control/subtype`). */
  readonly fields: ReadonlyMap<string, readonly string[]>;
  /** Names met on the way that could not be followed (a reader's limit, not drift). */
  readonly unresolved: readonly string[];
}

function add(map: Map<string, string[]>, key: string, values: readonly string[]): void {
  const list = map.get(key) ?? [];
  for (const value of values) if (!list.includes(value)) list.push(value);
  map.set(key, list);
}

/** Frame types and subtypes, and each frame's fields, from the shapes of a message union. */
function readFrames(
  shapes: readonly Shape[],
  decls: ReadonlyMap<string, Declaration>,
): { frames: Map<string, string[]>; fields: Map<string, string[]> } {
  const frames = new Map<string, string[]>();
  const fields = new Map<string, string[]>();
  for (const shape of shapes) {
    const names = [...shape.keys()];
    for (const type of literalsOf(shape, "type", decls)) {
      const subtypes = literalsOf(shape, "subtype", decls);
      add(frames, type, subtypes);
      if (subtypes.length === 0) add(fields, type, names);
      for (const subtype of subtypes) add(fields, `${type}/${subtype}`, names);
    }
  }
  return { frames, fields };
}

/** Control subtypes, and each one's fields, from the shapes of a control request union. */
function readControls(
  shapes: readonly Shape[],
  decls: ReadonlyMap<string, Declaration>,
  fields: Map<string, string[]>,
): string[] {
  const subtypes: string[] = [];
  for (const shape of shapes) {
    for (const subtype of literalsOf(shape, "subtype", decls)) {
      if (!subtypes.includes(subtype)) subtypes.push(subtype);
      add(fields, `control/${subtype}`, [...shape.keys()]);
    }
  }
  return subtypes;
}

/**
 * The SDK's `HOOK_EVENTS` tuple, in its order.
 *
 * @param dts The text of the SDK's `sdk.d.ts`.
 * @returns The events (empty when the tuple is not found).
 */
export function sdkHookEvents(dts: string): string[] {
  const tuple = dts.match(/declare const HOOK_EVENTS:\s*readonly\s*\[([^\]]*)\]/)?.[1] ?? "";
  return [...tuple.matchAll(/["']([^"']+)["']/g)].map((m) => m[1]!);
}

/**
 * Reads the official SDK's public types: the `SDKMessage` union, the
 * `SDKControlRequestInner` union, `HOOK_EVENTS` (in its order) and `Options`.
 *
 * @param dts The text of the SDK's `sdk.d.ts`.
 * @returns What the SDK declares.
 */
export function sdkCatalogue(dts: string): Catalogue {
  const decls = declarations(dts);
  const messages = resolve("SDKMessage", decls);
  const { frames, fields } = readFrames(messages.shapes, decls);
  const controls = resolve("SDKControlRequestInner", decls);
  const controlSubtypes = readControls(controls.shapes, decls, fields);
  const options = resolve("Options", decls);
  const defaults = new Map<string, string>();
  const optionNames: string[] = [];
  for (const shape of options.shapes) {
    for (const [name, prop] of shape) {
      if (!optionNames.includes(name)) optionNames.push(name);
      if (prop.defaultValue !== undefined) defaults.set(name, prop.defaultValue);
    }
  }
  return {
    frames,
    controlSubtypes,
    hookEvents: sdkHookEvents(dts),
    options: optionNames,
    defaults,
    fields,
    unresolved: [...messages.unresolved, ...controls.unresolved, ...options.unresolved],
  };
}

/** The texts of this library that say what it knows. */
export interface LibrarySources {
  /** Every `src/protocol/*.ts`, concatenated. */
  readonly protocol: string;
  /** `adapters/subprocess/cli_options.ts`, `subprocess_options.ts`, `src/session/session_options.ts`. */
  readonly options: string;
  /** `src/session/_control_router.ts` (the CLI's requests it routes by subtype). */
  readonly router: string;
  /** `docs/comparison.md` (its "option by option" section maps SDK options to ours). */
  readonly comparison: string;
  /** `HOOK_EVENTS` of `src/hooks/hooks.ts`. */
  readonly hookEvents: readonly string[];
}

/** The interfaces whose properties are this library's options. */
const OPTION_INTERFACES = ["CliOptions", "SubprocessOptions", "DuplexSessionOptions"];

/** The SDK option names `docs/comparison.md`'s "option by option" section maps. */
function mappedOptions(comparison: string): string[] {
  const start = comparison.search(/^## .*option by option/im);
  if (start < 0) return [];
  const rest = comparison.slice(start + 3);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1]!);
}

/**
 * Reads what this library knows: the frames of `CliFrame` with the subtypes
 * of `SystemFrameMap` and `ResultSubtype`, the subtypes of
 * `ControlRequestMap` and of the CLI requests the control router serves, the
 * hook events, and its options (with the SDK options the comparison doc maps).
 *
 * @param sources The library's texts.
 * @returns What the library knows.
 */
export function libraryCatalogue(sources: LibrarySources): Catalogue {
  const decls = declarations(sources.protocol);
  const cli = resolve("CliFrame", decls);
  const { frames, fields } = readFrames(cli.shapes, decls);
  frames.delete("unknown");
  fields.delete("unknown");
  for (const [subtype, prop] of resolve("SystemFrameMap", decls).shapes[0] ?? []) {
    add(frames, "system", [subtype]);
    const shape = resolve(prop.type, decls).shapes[0];
    if (shape !== undefined) add(fields, `system/${subtype}`, [...shape.keys()]);
  }
  add(frames, "result", literals(decls.get("ResultSubtype")?.body ?? ""));
  const controlMap = resolve("ControlRequestMap", decls).shapes[0] ?? new Map();
  const controlSubtypes = [...controlMap.keys()];
  for (const m of sources.router.matchAll(/\[\s*"([a-z][a-z_]*)",\s*(?:\(|\n)/g)) {
    if (!controlSubtypes.includes(m[1]!)) controlSubtypes.push(m[1]!);
  }
  const optionDecls = declarations(sources.options);
  const options: string[] = [];
  for (const name of OPTION_INTERFACES) {
    for (const shape of resolve(name, optionDecls).shapes) {
      for (const key of shape.keys()) if (!options.includes(key)) options.push(key);
    }
  }
  for (const name of mappedOptions(sources.comparison)) {
    if (!options.includes(name)) options.push(name);
  }
  return {
    frames,
    controlSubtypes,
    hookEvents: sources.hookEvents,
    options,
    defaults: new Map(),
    fields,
    unresolved: cli.unresolved,
  };
}

/**
 * The control subtypes the SDK's bundle writes (`subtype:"…"` literals of
 * `sdk.mjs`), which include the ones with no public type. Frame and reply
 * subtypes are in the list too; compare two bundles' lists, not one with a
 * catalogue.
 *
 * @param mjs The text of the SDK's `sdk.mjs`.
 * @returns The sorted, distinct subtypes.
 */
export function bundleSubtypes(mjs: string): string[] {
  const found = new Set<string>();
  for (const m of mjs.matchAll(/subtype\s*:\s*["']([a-z][a-z0-9_]*)["']/g)) found.add(m[1]!);
  return [...found].sort();
}

/**
 * The long flags a CLI's `--help` lists: every `--name` in the option column
 * of a line that starts with an option (indented `-x, --name` or `--name`),
 * not those mentioned in descriptions.
 *
 * @param help The `--help` output.
 * @returns The sorted, distinct flags, with their dashes.
 */
export function helpFlags(help: string): string[] {
  const found = new Set<string>();
  for (const line of help.split("\n")) {
    if (!/^\s+-/.test(line)) continue;
    const column = line.trim().split(/\s{2,}/)[0] ?? "";
    for (const m of column.matchAll(/(?:^|[\s,|])(--[A-Za-z0-9][\w-]*)/g)) found.add(m[1]!);
  }
  return [...found].sort();
}

/**
 * The long flags a source text passes (`"--name"` or `"--name=` literals).
 *
 * @param source Source text (the argument builder's files).
 * @returns The sorted, distinct flags.
 */
export function sourceFlags(source: string): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(/["'`](--[a-z][a-z0-9-]*)[="'`]/g)) found.add(m[1]!);
  return [...found].sort();
}

/** What a CLI binary's schemas (zod literals, `type:x("…")` in the bundle) name. */
export interface SchemaLiterals {
  /** The `type` literals: frame and block types, among others. */
  readonly types: readonly string[];
  /** The `subtype` literals: control requests, system frames, among others. */
  readonly subtypes: readonly string[];
}

/** The pattern {@linkcode schemaLiterals} reads, for `grep -a -o -E` over a binary. */
export const SCHEMA_PATTERN = '(sub)?type:[A-Za-z_$][A-Za-z0-9_$]{0,2}\\("[a-z][a-z0-9_]*"\\)';

/**
 * Reads the schema literals out of `grep -a -o -E SCHEMA_PATTERN <binary>`'s
 * output. The CLI's bundle declares each frame and control request it reads
 * or writes as a zod object whose `type` or `subtype` is a literal, so two
 * versions' lists differ where the CLI added or dropped one (internal ones
 * included: compare two binaries, not a binary with a catalogue).
 *
 * @param text The matches, one a line.
 * @returns The sorted, distinct literals.
 */
export function schemaLiterals(text: string): SchemaLiterals {
  const types = new Set<string>();
  const subtypes = new Set<string>();
  for (const m of text.matchAll(/(sub)?type:[A-Za-z_$][\w$]{0,2}\("([a-z][a-z0-9_]*)"\)/g)) {
    (m[1] ? subtypes : types).add(m[2]!);
  }
  return { types: [...types].sort(), subtypes: [...subtypes].sort() };
}
