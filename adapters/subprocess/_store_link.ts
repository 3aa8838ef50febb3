/**
 * The subprocess side of a session store: the mirror target (how the CLI's
 * transcript paths map to store keys, and reading the local transcript for a
 * catch-up), and the CLI's configuration folder as the child sees it.
 *
 * @module
 */

import type { MirrorTarget } from "../../src/store/mirror_target.ts";
import { keyOfTranscriptPath } from "../../src/store/project_key.ts";
import { isSessionStoreEntry, type SessionStoreEntry } from "../../src/store/session_store.ts";
import type { SubprocessOptions } from "./subprocess_options.ts";
import type { ResumeFolder } from "./_store_resume.ts";
import { absolutePath } from "./history/_paths.ts";

/**
 * The CLI's configuration folder for a child environment, as an absolute
 * path: `CLAUDE_CONFIG_DIR`, else `$HOME/.claude`; a relative one is the
 * child's, so it is resolved against the child's working directory.
 *
 * @param env The child's environment.
 * @param cwd The child's working directory (default: the host's).
 * @returns The folder, or `undefined` when neither variable is set.
 */
export function childConfigDir(
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
): string | undefined {
  const home = env.HOME?.trim();
  const dir = env.CLAUDE_CONFIG_DIR?.trim() || (home ? `${home}/.claude` : undefined);
  if (!dir) return undefined;
  return absolutePath(dir.startsWith("/") ? dir : `${cwd ?? Deno.cwd()}/${dir}`);
}

/**
 * Reads a local transcript's entries (lines that are not JSON objects with a
 * string `type`, such as a torn last line, are skipped).
 *
 * @param filePath The transcript.
 * @returns Its entries, in order.
 */
export async function readTranscriptEntries(filePath: string): Promise<SessionStoreEntry[]> {
  const text = await Deno.readTextFile(filePath);
  const entries: SessionStoreEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isSessionStoreEntry(value)) entries.push(value);
    } catch {
      // A torn line (the CLI was killed mid-write): the next catch-up reads it whole.
    }
  }
  return entries;
}

/**
 * The mirror target of a CLI started with `--session-mirror`.
 *
 * @param options The subprocess options (`sessionStore`, `projectKey`, `mirror`).
 * @param configDir The CLI's configuration folder as the child sees it ({@linkcode childConfigDir}).
 * @param local The private folder of a resume from the store, released at the mirror's end.
 * @returns The target, or `undefined` without a store.
 */
export function mirrorTargetOf(
  options: SubprocessOptions,
  configDir: string | undefined,
  local?: ResumeFolder,
): MirrorTarget | undefined {
  const store = options.sessionStore;
  if (!store) return undefined;
  const roots: string[] = [];
  if (configDir !== undefined) {
    const root = configDir;
    roots.push(root);
    try {
      const real = Deno.realPathSync(root); // the CLI may name files by the resolved path
      if (real !== root) roots.push(real);
    } catch {
      // Not there yet, or not readable: the path as given.
    }
  }
  return {
    store,
    keyOf: (filePath) => {
      for (const root of roots) {
        const key = keyOfTranscriptPath(root, filePath);
        if (key) {
          return options.projectKey === undefined
            ? key
            : { ...key, projectKey: options.projectKey };
        }
      }
      return undefined;
    },
    readLocal: readTranscriptEntries,
    ...(options.mirror ? { options: options.mirror } : {}),
    // A private copy (a resume from the store) goes once the store holds everything; while
    // the store is behind, its transcript moves to the CLI's own folder, where the next
    // resume on this host finds it and catches the store up.
    release: async (caughtUp) => {
      if (!local) return undefined;
      if (!caughtUp) return await local.keep();
      await local.remove();
      return undefined;
    },
  };
}
