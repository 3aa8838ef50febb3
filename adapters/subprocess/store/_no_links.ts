/* Paths below a DirectorySessionStore's root that follow no link (issue 21,
 * finding 9): every folder and file the store opens, creates, reads, lists or
 * deletes below its root is checked to be what the store makes (a real folder,
 * a regular file), never a symbolic link, so that a link planted in the folder
 * cannot make the store write, read or delete outside it. The root itself (and
 * the path to it) is the operator's choice and may be a link; it must not be
 * writable by group or others (anyone who can write it can plant links).
 *
 * How: each folder from the root down is `lstat`ed before use (made with mode
 * 0700 when missing and asked for); a file is `lstat`ed (a link or a
 * non-regular file is refused), opened without `create` when it exists, else
 * with `createNew` (O_EXCL, which does not follow a link in its last
 * component), and after the open its identity (`file.stat()`: dev and ino) is
 * compared with a new `lstat` of the path, and the folders are walked again. A
 * file opened for writing must have one hard link (a hard link planted to a
 * file outside is refused too).
 *
 * The `lstat`s are synchronous: a few per operation, each a lookup in the
 * kernel's cache on a local disk; async ones (a thread hop each) halved the
 * appends per second under load.
 *
 * Race-free enough: Deno has no `openat` nor `O_NOFOLLOW`, so a writer that
 * swaps a folder for a link and back within the microseconds of one open can
 * still make it create an empty file outside, or open one and be fooled by the
 * checks after it. With the root not writable by group or others, only the
 * store's own user (or root) can do that, and that user can write outside
 * files directly: links planted before a call, by anyone, are all refused. */

import { DuplexError } from "../../../src/errors.ts";

const ATTEMPTS = 10;

function refuse(action: string, path: string, why: string): DuplexError {
  return new DuplexError("store_failed", `Cannot ${action}: ${path} ${why}`);
}

/** The error for a link at `path` below `root`. */
export function linkError(action: string, root: string, path: string): DuplexError {
  return refuse(
    action,
    path,
    `is a symbolic link; the store follows no link below its folder ${root} (remove it)`,
  );
}

/* The path's own info (a link's, not its target's), or `undefined` when it is gone.
 * Synchronous on purpose (see the top of this file), hence outside the async functions. */
function lstatOrUndefined(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * Checks the store's root (a link to a folder is fine): a folder, not
 * writable by group or others unless `allowShared`; made (mode 0700, its
 * missing parents too) when missing and `create`.
 *
 * @returns Whether it exists.
 * @throws {DuplexError} `store_failed` when it is not a folder or is shared.
 */
export async function checkRoot(
  root: string,
  options: { readonly create: boolean; readonly allowShared: boolean; readonly action: string },
): Promise<boolean> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(root);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound) || !options.create) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
    await Deno.mkdir(root, { recursive: true, mode: 0o700 });
    info = await Deno.stat(root);
  }
  if (!info.isDirectory) throw refuse(options.action, root, "is not a folder");
  const mode = info.mode ?? 0;
  if ((mode & 0o022) !== 0 && !options.allowShared) {
    throw refuse(
      options.action,
      `the store's folder ${root}`,
      `is writable by group or others (mode 0${(mode & 0o777).toString(8)}), so anyone ` +
        `may plant links in it; run chmod go-w ${root}, or pass allowSharedRoot: true`,
    );
  }
  return true;
}

/**
 * Checks each folder from below `root` down to `dir` (inclusive): a real
 * folder, no link; with `create`, a missing one is made (mode 0700).
 *
 * @returns Whether `dir` exists (always, with `create`).
 * @throws {DuplexError} `store_failed` naming a link or a non-folder.
 */
export async function walkDirs(
  root: string,
  dir: string,
  options: { readonly create: boolean; readonly action: string },
): Promise<boolean> {
  if (dir !== root && !dir.startsWith(`${root}/`)) {
    throw refuse(options.action, dir, `is not below the store's folder ${root}`);
  }
  let path = root;
  for (const name of dir.slice(root.length + 1).split("/").filter((n) => n !== "")) {
    path = `${path}/${name}`;
    let info = lstatOrUndefined(path);
    if (info === undefined) {
      if (!options.create) return false;
      try {
        await Deno.mkdir(path, { mode: 0o700 });
      } catch (made) {
        if (!(made instanceof Deno.errors.AlreadyExists)) throw made;
      }
      info = lstatOrUndefined(path);
      if (info === undefined) throw new Deno.errors.NotFound(`${path} was removed while made`);
    }
    if (info.isSymlink) throw linkError(options.action, root, path);
    if (!info.isDirectory) throw refuse(options.action, path, "is not a folder");
  }
  return true;
}

/** How {@linkcode openInside} opens a file. */
export interface InsideOpen {
  readonly root: string;
  readonly path: string;
  readonly action: string;
  readonly read?: boolean;
  readonly write?: boolean;
  readonly append?: boolean;
  /** Make it (mode 0600) when missing; else a missing file throws NotFound. */
  readonly create?: boolean;
}

/**
 * Opens a file below the root through no link (see the top of this file).
 *
 * @throws {Deno.errors.NotFound} When it (or a folder above it) is missing and not `create`.
 * @throws {DuplexError} `store_failed` naming a link, a non-regular file, a
 * file with other hard links (when writing), or a path that keeps changing.
 */
export async function openInside(open: InsideOpen): Promise<Deno.FsFile> {
  const { root, path, action } = open;
  const dir = path.slice(0, path.lastIndexOf("/"));
  const writing = open.write === true || open.append === true;
  const modes = {
    read: open.read === true,
    write: open.write === true,
    append: open.append === true,
  };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (!await walkDirs(root, dir, { create: false, action })) {
      throw new Deno.errors.NotFound(`Cannot ${action}: ${dir} is missing`);
    }
    let file: Deno.FsFile;
    try {
      const before = lstatOrUndefined(path);
      if (before?.isSymlink) throw linkError(action, root, path);
      if (before && !before.isFile) throw refuse(action, path, "is not a regular file");
      if (!before) throw new Deno.errors.NotFound(`Cannot ${action}: ${path} is missing`);
      file = await Deno.open(path, modes);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || open.create !== true) throw error;
      try {
        file = await Deno.open(path, { ...modes, createNew: true, mode: 0o600 });
      } catch (made) {
        if (made instanceof Deno.errors.AlreadyExists) continue; // made meanwhile: look again
        throw made;
      }
    }
    try {
      const opened = await file.stat();
      await walkDirs(root, dir, { create: false, action });
      const named = lstatOrUndefined(path);
      if (named?.isSymlink) throw linkError(action, root, path);
      if (named?.dev === opened.dev && named?.ino === opened.ino && opened.isFile) {
        if (writing && (opened.nlink ?? 1) > 1) {
          throw refuse(
            action,
            path,
            `has ${opened.nlink} hard links; the store writes only its own`,
          );
        }
        return file;
      }
    } catch (error) {
      file.close();
      throw error;
    }
    file.close(); // replaced between the look and the open: look again
  }
  throw refuse(action, path, "keeps changing while opened");
}

/** Writes a whole small file below the root through no link (mode 0600). */
export async function writeInside(
  root: string,
  path: string,
  text: string,
  action: string,
): Promise<void> {
  using file = await openInside({ root, path, action, write: true, create: true });
  await file.truncate(0);
  const bytes = new TextEncoder().encode(text);
  for (let done = 0; done < bytes.length;) done += await file.write(bytes.subarray(done));
}

/** Reads a whole small file below the root through no link. */
export async function readInside(root: string, path: string, action: string): Promise<string> {
  using file = await openInside({ root, path, action, read: true });
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(4096);
  let text = "";
  for (let n = await file.read(buffer); n !== null; n = await file.read(buffer)) {
    text += decoder.decode(buffer.subarray(0, n), { stream: true });
  }
  return text + decoder.decode();
}
