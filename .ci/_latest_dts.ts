/**
 * A small reader of TypeScript declarations, for the drift watch
 * (`.ci/test_latest.ts`): it finds the `type` and `interface` declarations of
 * a source text (the official SDK's bundled `sdk.d.ts`, or this library's
 * own `src/protocol/*.ts`), resolves a union alias to the object shapes it
 * names, and reads their properties, string literals and `@default` tags.
 *
 * It is not a type checker: it follows names, unions (`|`), intersections
 * (`&`), `extends` and qualified names (`coreTypes.X`), and reports a name it
 * cannot follow (a mapped, indexed or generic type) in `unresolved` rather
 * than guessing. That is enough for the shapes the SDK bundles (one object
 * literal per message type) and for this library's deno-fmt'ed sources.
 *
 * @module
 */

/** One declaration of a source. */
export interface Declaration {
  /** `type` (an alias) or `interface`. */
  readonly kind: "type" | "interface";
  /** The declared name. */
  readonly name: string;
  /** An alias's right-hand side, or an interface's braces' inside. */
  readonly body: string;
  /** The same text with comments and string contents blanked (same length). */
  readonly code: string;
  /** The names after an interface's `extends`. */
  readonly extends: readonly string[];
}

/** A property of an object shape. */
export interface Property {
  /** The property's type, as written (comments removed). */
  readonly type: string;
  /** Whether it is optional (`?:`). */
  readonly optional: boolean;
  /** The value of its JSDoc's `@default` tag, when it has one. */
  readonly defaultValue?: string;
}

/** An object shape: a name per property. */
export type Shape = ReadonlyMap<string, Property>;

/** The shapes a type resolves to, and the names on the way it could not follow. */
export interface Resolved {
  /** One shape per union member. */
  readonly shapes: Shape[];
  /** Names that are not declared in the sources, or not object shapes. */
  readonly unresolved: string[];
}

const OPEN = "{([<";
const CLOSE = "})]>";

/**
 * Blanks comments and the inside of string literals (keeping quotes, newlines
 * and the length), so that brackets and separators can be counted on the
 * result while positions still point into the original text.
 *
 * @param source TypeScript text.
 * @param strings Whether to blank string contents too (else only comments).
 * @returns Text of the same length.
 */
export function blankComments(source: string, strings = true): string {
  let out = "";
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      out += " ".repeat(stop - i);
      i = stop;
    } else if (strings && (c === "'" || c === '"' || c === "`")) {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== "\n") {
        j += source[j] === "\\" ? 2 : 1;
      }
      out += c + " ".repeat(Math.max(0, Math.min(j, source.length) - i - 1));
      if (j < source.length) out += source[j];
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out.slice(0, source.length);
}

/**
 * The index of the first separator outside every bracket from `from` on, or
 * of a closing bracket that closes one opened before `from`, else the length.
 */
function scanTo(code: string, from: number, separators: string): number {
  let depth = 0;
  for (let i = from; i < code.length; i++) {
    const c = code[i]!;
    if (c === "=" && code[i + 1] === ">") {
      i++;
      continue;
    }
    if (OPEN.includes(c)) depth++;
    else if (CLOSE.includes(c) && --depth < 0) return i;
    else if (depth === 0 && separators.includes(c)) return i;
  }
  return code.length;
}

/** The index just past the bracket that closes the one at `start` (in blanked code). */
function closing(code: string, start: number): number {
  return Math.min(code.length, scanTo(code, start + 1, "") + 1);
}

/**
 * Splits blanked code at a separator that is outside every bracket.
 *
 * @returns The parts' `[start, end)` ranges.
 */
function splitTop(code: string, separators: string): [number, number][] {
  const parts: [number, number][] = [];
  let from = 0;
  while (from <= code.length) {
    const end = scanTo(code, from, separators);
    parts.push([from, end]);
    from = end + 1;
  }
  return parts;
}

const DECLARATION =
  /^[ \t]*(?:export[ \t]+)?(?:declare[ \t]+)?(type|interface)[ \t]+([A-Za-z_$][\w$]*)/gm;

/**
 * Finds every top-level `type` and `interface` declaration.
 *
 * @param source TypeScript text (a `.d.ts` or a module).
 * @returns The declarations by name (a later one of the same name wins).
 */
export function declarations(source: string): Map<string, Declaration> {
  const code = blankComments(source);
  const found = new Map<string, Declaration>();
  for (const match of code.matchAll(DECLARATION)) {
    const kind = match[1] as "type" | "interface";
    const name = match[2]!;
    let i = match.index + match[0].length;
    while (/\s/.test(code[i] ?? "")) i++;
    if (code[i] === "<") i = closing(code, i);
    if (kind === "type") {
      const equals = code.indexOf("=", i);
      if (equals < 0 || code.slice(i, equals).trim() !== "") continue;
      const end = scanTo(code, equals + 1, ";");
      found.set(name, {
        kind,
        name,
        body: source.slice(equals + 1, end).trim(),
        code: code.slice(equals + 1, end).trim(),
        extends: [],
      });
    } else {
      const brace = code.indexOf("{", i);
      if (brace < 0) continue;
      const heritage = code.slice(i, brace).trim();
      const names = heritage.startsWith("extends")
        ? splitTop(heritage.slice("extends".length), ",")
          .map(([a, b]) => heritage.slice("extends".length).slice(a, b).trim())
        : [];
      const end = closing(code, brace);
      found.set(name, {
        kind,
        name,
        body: source.slice(brace + 1, end - 1),
        code: code.slice(brace + 1, end - 1),
        extends: names.filter((n) => n !== ""),
      });
    }
  }
  return found;
}

const PROPERTY = /^\s*(?:readonly\s+)?(?:([A-Za-z_$][\w$]*)|(["'])([^"']*)\2)\s*(\?)?\s*(:|\()/;

/** The `@default` of the last JSDoc block in a text, if any. */
function defaultTag(text: string): string | undefined {
  const docs = [...text.matchAll(/\/\*\*([\s\S]*?)\*\//g)];
  const doc = docs.at(-1)?.[1];
  const tag = doc?.match(/@default\s+([^\n]*)/)?.[1]?.replace(/\*\/?$/, "").trim();
  return tag === undefined || tag === "" ? undefined : tag;
}

/**
 * Reads the properties (and methods) of an object type's inside.
 *
 * @param body The text between the braces.
 * @param code The same text, blanked by {@linkcode blankComments}.
 * @returns The properties, by name, in order.
 */
export function properties(
  body: string,
  code: string = blankComments(body),
): Map<string, Property> {
  const plain = blankComments(body, false);
  const props = new Map<string, Property>();
  for (const [start, end] of splitTop(code, ";,")) {
    const match = code.slice(start, end).match(PROPERTY);
    if (match === null) continue;
    const name = match[1] ?? plain.slice(start, end).match(PROPERTY)?.[3];
    if (name === undefined) continue;
    const colon = start + match[0].length;
    const defaultValue = defaultTag(body.slice(start, colon));
    props.set(name, {
      type: match[5] === ":" ? plain.slice(colon, end).trim() : "function",
      optional: match[4] === "?",
      ...(defaultValue === undefined ? {} : { defaultValue }),
    });
  }
  return props;
}

/**
 * The string literals of a union of literals (`'a' | "b"`); other members are skipped.
 *
 * @param text A type, as written.
 * @returns The literals' values.
 */
export function literals(text: string): string[] {
  const code = blankComments(text);
  const values: string[] = [];
  for (const [start, end] of splitTop(code, "|")) {
    const member = text.slice(start, end).trim();
    const match = member.match(/^(["'])([^"']*)\1$/);
    if (match) values.push(match[2]!);
  }
  return values;
}

/** A reference's declared name: no generic arguments, no namespace. */
function referenceName(text: string): string | undefined {
  const match = text.trim().match(/^(?:[A-Za-z_$][\w$]*\.)*([A-Za-z_$][\w$]*)\s*(?:<[\s\S]*>)?$/);
  return match?.[1];
}

const KEYWORDS = new Set([
  "string",
  "number",
  "boolean",
  "null",
  "undefined",
  "unknown",
  "never",
  "object",
  "any",
  "void",
]);

function merge(parts: Shape[][]): Shape[] {
  let shapes: Shape[] = [new Map()];
  for (const options of parts) {
    if (options.length === 0) continue; // an unresolved part: keep what the others have
    shapes = shapes.flatMap((base) => options.map((extra) => new Map([...base, ...extra])));
  }
  return shapes;
}

/**
 * Resolves a type (a name or a type expression) to the object shapes it is.
 *
 * @param type The type's text.
 * @param decls The declarations to look names up in.
 * @returns The shapes, and what could not be followed.
 */
export function resolve(type: string, decls: ReadonlyMap<string, Declaration>): Resolved {
  const unresolved: string[] = [];
  const shapes = expand(type, blankComments(type), decls, unresolved, new Set());
  return { shapes, unresolved };
}

function expand(
  text: string,
  code: string,
  decls: ReadonlyMap<string, Declaration>,
  unresolved: string[],
  seen: ReadonlySet<string>,
): Shape[] {
  const trimmed = code.trim();
  const offset = code.length - code.trimStart().length;
  const body = text.slice(offset, offset + trimmed.length);
  const members = splitTop(trimmed, "|").filter(([a, b]) => trimmed.slice(a, b).trim() !== "");
  if (members.length > 1) {
    return members.flatMap(([a, b]) =>
      expand(body.slice(a, b), trimmed.slice(a, b), decls, unresolved, seen)
    );
  }
  const parts = splitTop(trimmed, "&").filter(([a, b]) => trimmed.slice(a, b).trim() !== "");
  if (parts.length > 1) {
    return merge(
      parts.map(([a, b]) => expand(body.slice(a, b), trimmed.slice(a, b), decls, unresolved, seen)),
    );
  }
  if (trimmed.startsWith("(") && closing(trimmed, 0) === trimmed.length) {
    return expand(body.slice(1, -1), trimmed.slice(1, -1), decls, unresolved, seen);
  }
  if (trimmed.startsWith("{") && closing(trimmed, 0) === trimmed.length) {
    return [properties(body.slice(1, -1), trimmed.slice(1, -1))];
  }
  if (/^["'`\d-]/.test(trimmed) || KEYWORDS.has(trimmed)) return [];
  const name = referenceName(trimmed);
  const decl = name === undefined ? undefined : decls.get(name);
  if (decl === undefined || seen.has(decl.name)) {
    unresolved.push(trimmed);
    return [];
  }
  const inner = new Set([...seen, decl.name]);
  if (decl.kind === "type") return expand(decl.body, decl.code, decls, unresolved, inner);
  const bases = decl.extends.map((base) => expand(base, base, decls, unresolved, inner));
  return merge([...bases, [properties(decl.body, decl.code)]]);
}

/**
 * The values a property of each shape takes as string literals (following an
 * alias of literals once), for example every `type` of a message union.
 *
 * @param shape The shape.
 * @param name The property.
 * @param decls The declarations, for a property typed by an alias name.
 * @returns The literal values (empty when the property is missing or not literal).
 */
export function literalsOf(
  shape: Shape,
  name: string,
  decls: ReadonlyMap<string, Declaration>,
): string[] {
  const type = shape.get(name)?.type;
  if (type === undefined) return [];
  const direct = literals(type);
  if (direct.length > 0) return direct;
  const alias = decls.get(referenceName(type) ?? "");
  return alias?.kind === "type" ? literals(alias.body) : [];
}
