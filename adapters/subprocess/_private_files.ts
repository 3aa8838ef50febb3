/**
 * The private files of one CLI launch: the settings, agents and MCP configs
 * that would show up in `ps` on the command line, written instead into a
 * fresh folder only this user can enter (0700; each file 0600), which goes
 * when the CLI has exited.
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { DuplexError } from "../../src/errors.ts";

/** A private folder with the files of one launch. */
export interface PrivateFolder {
  /** Its absolute path. */
  readonly path: string;
  /** Removes it and its files; never rejects. */
  remove(): Promise<void>;
  /** Removes it now, synchronously (for the host's exit); never throws. */
  removeSync(): void;
}

function denied(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
}

/**
 * Writes the files into a new private folder.
 *
 * @param files The files by name.
 * @param tempDir Where the folder is made (default: the system's temporary folder).
 * @returns The folder.
 * @throws {DuplexError} `not_permitted` when writing there is not allowed,
 * naming the flag and the alternatives; `invalid_argument` when `tempDir`
 * does not exist.
 */
export async function writePrivateFiles(
  files: Readonly<Record<string, string>>,
  tempDir: string | undefined,
): Promise<PrivateFolder> {
  let path: string;
  try {
    path = await Deno.makeTempDir({ prefix: "duplex-claude-", ...(tempDir && { dir: tempDir }) });
  } catch (error) {
    throw explain(error, tempDir);
  }
  const folder: PrivateFolder = {
    path,
    remove: () => Deno.remove(path, { recursive: true }).catch(() => {}),
    removeSync: () => {
      try {
        Deno.removeSync(path, { recursive: true });
      } catch {
        // Gone already, or not permitted: nothing more can be done now.
      }
    },
  };
  try {
    await Deno.chmod(path, 0o700);
    for (const [name, contents] of Object.entries(files)) {
      await Deno.writeTextFile(`${path}/${name}`, contents, { mode: 0o600, createNew: true });
    }
  } catch (error) {
    await folder.remove();
    throw explain(error, tempDir);
  }
  return folder;
}

function explain(error: unknown, tempDir: string | undefined): DuplexError {
  const where = tempDir ?? "the temporary folder";
  if (denied(error)) {
    return new DuplexError(
      "not_permitted",
      `Cannot start claude: the settings, agents or MCP config given as objects are written to a ` +
        `private file in ${where}, which needs --allow-write for it; run with ` +
        `--allow-write=${tempDir ?? "<temp dir>"}, pass tempDir: a folder you may write, or pass ` +
        `them as file paths`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.NotFound) {
    return new DuplexError(
      "invalid_argument",
      `Cannot start claude: tempDir ${where} does not exist; create it or pass another tempDir`,
      { cause: error },
    );
  }
  return new DuplexError(
    "invalid_argument",
    `Cannot start claude: the private files could not be written in ${where} (${messageOf(error)})`,
    { cause: error },
  );
}
