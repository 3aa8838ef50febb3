// This module is browser compatible.
/**
 * {@linkcode projectKeyOf} and {@linkcode keyOfTranscriptPath}: how a
 * working directory and a transcript path name a store key, as the CLI and
 * the official SDK name them.
 *
 * @module
 */

import type { SessionKey } from "./session_store.ts";

/** Longest project folder name the CLI writes before it cuts it and adds a hash. */
const MAX_FOLDER_NAME = 200;

/** The CLI's 32-bit string hash (`h = h * 31 + unit`, over UTF-16 units), in base 36. */
function folderHash(text: string): string {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (hash << 5) - hash + text.charCodeAt(i) | 0;
  return Math.abs(hash).toString(36);
}

/**
 * The default project key of a working directory: the name of the project
 * folder the CLI keeps its transcripts in (`<configDir>/projects/<name>/`),
 * exactly as the CLI and the official SDK derive it. Every character other
 * than `A-Z`, `a-z` and `0-9` becomes `-`; a name longer than 200
 * characters is cut to 200 and followed by `-` and the base-36 hash of the
 * whole path (the SDK's portable hash, the same under Bun and Node.js).
 *
 * Pass the path as the CLI sees it: absolute, with symbolic links resolved
 * (the SDK resolves them with `realpath`; this function does no I/O). The
 * SDK, like the CLI, lets a `CLAUDE_CODE_PROJECT_DIR_NAME` variable replace
 * the name when `CLAUDE_CONFIG_DIR` is set; that override is not applied here.
 *
 * @param cwd The working directory, absolute and resolved.
 * @returns The project key, for example `-home-me-app` for `/home/me/app`.
 * @throws {TypeError} When `cwd` is not a non-empty string.
 *
 * @example The key of a project folder
 * ```ts
 * import { projectKeyOf } from "./project_key.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(projectKeyOf("/home/me/my app"), "-home-me-my-app");
 * assert.equal(projectKeyOf(`/${"x".repeat(300)}`).length, 200 + 1 + 6);
 * ```
 */
export function projectKeyOf(cwd: string): string {
  if (typeof cwd !== "string" || cwd === "") {
    throw new TypeError(
      `Cannot derive a project key: cwd must be a non-empty string, got ${
        typeof cwd === "string" ? "an empty string" : typeof cwd
      }`,
    );
  }
  const name = cwd.replace(/[^a-zA-Z0-9]/g, "-");
  if (name.length <= MAX_FOLDER_NAME) return name;
  return `${name.slice(0, MAX_FOLDER_NAME)}-${folderHash(cwd)}`;
}

/** Splits a POSIX path into its segments, `.` dropped and `..` applied; `undefined` past the root. */
function segments(path: string): string[] | undefined {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts;
}

/**
 * The store key of a transcript the CLI names in a `transcript_mirror`
 * frame (its `filePath`), relative to `<configDir>/projects`, as the
 * official SDK maps it:
 *
 * - `<project>/<sessionId>.jsonl` is a main transcript:
 *   `{ projectKey: "<project>", sessionId }`;
 * - `<project>/<sessionId>/<a>/…/<name>.jsonl` (at least two segments
 *   under the session's folder) is a subagent's: `subpath` is `<a>/…/<name>`,
 *   for example `subagents/agent-<id>`;
 * - anything else (a path outside `<configDir>/projects`, one that climbs out
 *   of it with `..`, a file that is not `.jsonl`, a file directly in the
 *   session's folder) is refused with `undefined`.
 *
 * Paths are POSIX paths; `configDir` and `filePath` must both be absolute
 * or both relative to the same folder. `.` and `..` segments are resolved
 * as text (no symbolic link is followed).
 *
 * @param configDir The CLI's configuration folder (the one holding `projects/`).
 * @param filePath The transcript's path.
 * @returns The key, or `undefined` when the path is not a transcript under `projects/`.
 * @throws {TypeError} When an argument is not a non-empty string.
 *
 * @example Main and subagent transcripts
 * ```ts
 * import { keyOfTranscriptPath } from "./project_key.ts";
 * import assert from "node:assert/strict";
 *
 * const config = "/home/me/.claude";
 * const id = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
 * assert.deepEqual(keyOfTranscriptPath(config, `${config}/projects/-home-me-app/${id}.jsonl`), {
 *   projectKey: "-home-me-app",
 *   sessionId: id,
 * });
 * assert.deepEqual(
 *   keyOfTranscriptPath(config, `${config}/projects/-home-me-app/${id}/subagents/agent-a1.jsonl`),
 *   { projectKey: "-home-me-app", sessionId: id, subpath: "subagents/agent-a1" },
 * );
 * assert.equal(keyOfTranscriptPath(config, "/etc/passwd.jsonl"), undefined);
 * ```
 */
export function keyOfTranscriptPath(configDir: string, filePath: string): SessionKey | undefined {
  for (const [name, value] of [["configDir", configDir], ["filePath", filePath]] as const) {
    if (typeof value !== "string" || value === "") {
      throw new TypeError(
        `Cannot map a transcript path to a key: ${name} must be a non-empty string`,
      );
    }
  }
  if (configDir.startsWith("/") !== filePath.startsWith("/")) return undefined;
  const root = segments(configDir);
  const file = segments(filePath);
  if (root === undefined || file === undefined) return undefined;
  const inside = [...root, "projects"];
  if (file.length <= inside.length || inside.some((part, i) => file[i] !== part)) return undefined;
  const rest = file.slice(inside.length);
  const last = rest.at(-1) as string;
  if (!last.endsWith(".jsonl") || last === ".jsonl") return undefined;
  rest[rest.length - 1] = last.slice(0, -".jsonl".length);
  const [projectKey, sessionId, ...subpath] = rest as [string, string, ...string[]];
  if (rest.length === 2) return { projectKey, sessionId };
  if (rest.length >= 4) return { projectKey, sessionId, subpath: subpath.join("/") };
  return undefined;
}
