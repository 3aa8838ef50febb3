/* Where a DirectorySessionStore keeps a key: one name per key field, made
 * so that no key can name a path outside the store or collide with another.
 *
 * A field becomes a file name by keeping the bytes `a-z 0-9 _ -` of its
 * UTF-8 form and writing every other byte as `%XX` (upper-case hex): no `/`,
 * no `.` (so never `.` or `..`, and the `.jsonl` / `.name` suffixes are
 * unambiguous), no upper-case letter outside `%XX` (so names stay apart on
 * case-insensitive file systems). A name longer than 160 characters is
 * replaced by `~` and the SHA-256 of the field (hex), and the field itself is
 * kept beside it in `<name>.name`, from which listings read it back.
 *
 *   <root>/<project>/<session>.jsonl             the main transcript
 *   <root>/<project>/<session>/<subpath>.jsonl   a subkey (the subpath is one name: `/` is %2F)
 *   <root>/<project>/.clock                      the project's clock (_project_clock.ts)
 *
 * No path is used through a link below the root (_no_links.ts). */

import { DuplexError } from "../../../src/errors.ts";
import { readInside } from "./_no_links.ts";

const KEEP = /^[a-z0-9_-]$/;
const MAX_NAME = 160;
const HEX = /^[0-9A-F]{2}$/;

/** The encoded form of a field (before hashing). */
function escape(field: string): string {
  let name = "";
  for (const byte of new TextEncoder().encode(field)) {
    const char = String.fromCharCode(byte);
    name += KEEP.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return name;
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A field's file name, and whether it is a hash (whose `.name` sidecar holds the field). */
export interface FieldName {
  readonly name: string;
  readonly hashed: boolean;
}

/** The file name of a key field. */
export async function fieldName(field: string): Promise<FieldName> {
  const name = escape(field);
  if (name.length <= MAX_NAME) return { name, hashed: false };
  return { name: `~${await sha256(field)}`, hashed: true };
}

/**
 * The field a name stands for, or `undefined` for a name this store does not
 * make (a foreign file). A hashed name is read back by `readSidecar`.
 */
export function unescape(name: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const char = name[i] as string;
    if (KEEP.test(char)) {
      bytes.push(char.charCodeAt(0));
      continue;
    }
    const hex = name.slice(i + 1, i + 3);
    if (char !== "%" || !HEX.test(hex)) return undefined;
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  let field: string;
  try {
    field = new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
  // Only the canonical form: `%61` for `a` is not a name this store writes.
  return field !== "" && escape(field) === name ? field : undefined;
}

/** The paths of one key. */
export interface KeyPaths {
  /** The transcript's file. */
  readonly file: string;
  /** The folder that holds it. */
  readonly dir: string;
  /** The project's folder. */
  readonly projectDir: string;
  /** Sidecars to write (before the file) for hashed names: path and field. */
  readonly sidecars: readonly (readonly [string, string])[];
  /** For a main key, the folder of its subkeys. */
  readonly subkeysDir?: string;
}

/** The project folder of a project key, and its sidecar if hashed. */
export async function projectDir(
  root: string,
  projectKey: string,
): Promise<{ dir: string; sidecar?: readonly [string, string] }> {
  const project = await fieldName(projectKey);
  const dir = `${root}/${project.name}`;
  return project.hashed ? { dir, sidecar: [`${dir}.name`, projectKey] } : { dir };
}

/** Where a key's transcript lives. */
export async function keyPaths(
  root: string,
  key: { readonly projectKey: string; readonly sessionId: string; readonly subpath?: string },
): Promise<KeyPaths> {
  const project = await projectDir(root, key.projectKey);
  const sidecars: (readonly [string, string])[] = project.sidecar ? [project.sidecar] : [];
  const session = await fieldName(key.sessionId);
  const sessionBase = `${project.dir}/${session.name}`;
  if (session.hashed) sidecars.push([`${sessionBase}.name`, key.sessionId]);
  if (key.subpath === undefined) {
    return {
      file: `${sessionBase}.jsonl`,
      dir: project.dir,
      projectDir: project.dir,
      sidecars,
      subkeysDir: sessionBase,
    };
  }
  const sub = await fieldName(key.subpath);
  if (sub.hashed) sidecars.push([`${sessionBase}/${sub.name}.name`, key.subpath]);
  return {
    file: `${sessionBase}/${sub.name}.jsonl`,
    dir: sessionBase,
    projectDir: project.dir,
    sidecars,
  };
}

/**
 * The field of a listed `<name>.jsonl` in `dir`: unescaped, or for a hashed
 * name read from its sidecar (checked against the hash).
 *
 * @returns The field, or `undefined` when the name is not one of this store's.
 * @throws {DuplexError} `store_failed` when its sidecar is a link.
 */
export async function fieldOfListed(
  root: string,
  dir: string,
  stem: string,
): Promise<string | undefined> {
  if (!stem.startsWith("~")) return unescape(stem);
  let field: string;
  try {
    field = await readInside(root, `${dir}/${stem}.name`, "list the store");
  } catch (error) {
    if (error instanceof DuplexError) throw error;
    return undefined;
  }
  return (await fieldName(field)).name === stem ? field : undefined;
}
