// This module is browser compatible.
/**
 * {@linkcode Redaction}: what {@linkcode record} hides from a transcript, and
 * what {@linkcode replay} hides the same way in what the code under test
 * writes before comparing it with the recording.
 *
 * @module
 */

/**
 * One thing to hide in every string of a recorded line (values and keys of
 * the JSON, and lines that are not JSON):
 *
 * - a string: every occurrence becomes `"[redacted]"`;
 * - a `RegExp`: every match becomes `"[redacted]"` (the `g` flag is implied);
 * - `{ match, replace }`: every occurrence (or match) becomes `replace`, for
 *   example `{ match: Deno.env.get("HOME")!, replace: "~" }`;
 * - a function: returns the string to keep (anything it likes).
 *
 * Rules apply in the order given: put a specific one (a folder inside the
 * home folder) before a general one (the home folder).
 */
export type Redaction =
  | string
  | RegExp
  | { readonly match: string | RegExp; readonly replace: string }
  | ((text: string) => string);

/** What a string or pattern rule leaves in place of what it hides. */
export const REDACTED = "[redacted]";

/**
 * Anthropic API keys (`sk-ant-…`): hidden by {@linkcode record} unless
 * `redactDefaults: false`.
 */
export const API_KEY_PATTERN: RegExp = /sk-ant-[A-Za-z0-9_-]{8,}/g;

/** A string → string rewrite made of redaction rules. */
export type Redactor = (text: string) => string;

/**
 * Checks redaction rules and combines them into one rewrite.
 *
 * @param rules The rules, in order.
 * @param defaults Whether to hide API keys too ({@linkcode API_KEY_PATTERN}), first.
 * @param what The start of an error message, for example `"Cannot record"`.
 * @returns The rewrite.
 * @throws {TypeError} For a rule of the wrong shape or an empty string.
 */
export function redactor(
  rules: readonly Redaction[] | undefined,
  defaults: boolean,
  what: string,
): Redactor {
  if (rules !== undefined && !Array.isArray(rules)) {
    throw new TypeError(`${what}: redact must be an array of rules`);
  }
  const steps: Redactor[] = defaults ? [replacer(API_KEY_PATTERN, REDACTED)] : [];
  (rules ?? []).forEach((rule, i) => steps.push(step(rule, `${what}: redact[${i}]`)));
  if (steps.length === 0) return (text) => text;
  return (text) => steps.reduce((acc, rewrite) => rewrite(acc), text);
}

function step(rule: Redaction, what: string): Redactor {
  if (typeof rule === "function") {
    return (text) => {
      const out = rule(text);
      if (typeof out !== "string") throw new TypeError(`${what} returned a non-string`);
      return out;
    };
  }
  if (typeof rule === "string" || rule instanceof RegExp) return replacer(rule, REDACTED, what);
  if (typeof rule === "object" && rule !== null && typeof rule.replace === "string") {
    return replacer(rule.match, rule.replace, what);
  }
  throw new TypeError(
    `${what} must be a string, a RegExp, { match, replace } or a function, got ${typeof rule}`,
  );
}

function replacer(match: unknown, replace: string, what = "redaction"): Redactor {
  if (typeof match === "string") {
    if (match === "") throw new TypeError(`${what}: an empty string would match everywhere`);
    return (text) => text.replaceAll(match, () => replace);
  }
  if (match instanceof RegExp) {
    const global = match.global ? match : new RegExp(match.source, `${match.flags}g`);
    return (text) => text.replace(global, () => replace);
  }
  throw new TypeError(`${what}: match must be a string or a RegExp, got ${typeof match}`);
}

/**
 * Applies a rewrite to every string in a JSON value (object keys included).
 *
 * @param value A parsed JSON value.
 * @param rewrite The rewrite.
 * @returns A rewritten copy (a number, boolean or null as it is).
 */
export function redactJson(value: unknown, rewrite: Redactor): unknown {
  if (typeof value === "string") return rewrite(value);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, rewrite));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[rewrite(key)] = redactJson(item, rewrite);
    return out;
  }
  return value;
}
