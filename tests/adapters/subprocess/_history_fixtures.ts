/**
 * Copies of the transcripts the real CLI wrote (`tests/fixtures/history/`,
 * recorded by its `record.ts`), laid out as the CLI lays them out, in a
 * fresh folder under `.cache/test-tmp/`.
 *
 * @module
 */

import type { SessionMessage } from "../../../adapters/subprocess/history/mod.ts";
import { makeTestDir } from "./_helpers.ts";

/** The recorded transcripts. */
export type FixtureName = "three_turns" | "branched" | "compacted";

/** The working directory the recorded sessions ran in (after `record.ts` made it neutral). */
export const RECORDED_DIR = "/home/user/project";

/** Its project folder name, as the CLI makes it. */
export const RECORDED_FOLDER = "-home-user-project";

/** A copied history. */
export interface History extends AsyncDisposable {
  /** The configuration folder (holds `projects/`). */
  readonly configDir: string;
  /** The project folder holding the copies. */
  readonly projectDir: string;
  /** Each fixture's session id. */
  readonly ids: Readonly<Record<FixtureName, string>>;
  /** The transcript path of a fixture. */
  file(name: FixtureName): string;
}

const NAMES: readonly FixtureName[] = ["three_turns", "branched", "compacted"];

/** The session id a recorded transcript holds. */
async function sessionIdOf(text: string): Promise<string> {
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line);
    if (typeof entry.sessionId === "string") return entry.sessionId;
  }
  return await Promise.reject(new Error("Cannot find a session id in the fixture"));
}

/**
 * Copies the fixtures into `<tmp>/config/projects/-home-user-project/`, with
 * modification times one minute apart in the order three_turns (oldest),
 * branched, compacted (newest).
 *
 * @returns The copy; disposing it removes the folder.
 */
export async function copyHistory(): Promise<History> {
  const root = await makeTestDir();
  const configDir = `${root}/config`;
  const projectDir = `${configDir}/projects/${RECORDED_FOLDER}`;
  await Deno.mkdir(projectDir, { recursive: true });
  const ids = {} as Record<FixtureName, string>;
  const base = Date.now() - 3_600_000;
  for (const [i, name] of NAMES.entries()) {
    const text = await Deno.readTextFile(
      new URL(`../../fixtures/history/${name}.jsonl`, import.meta.url),
    );
    ids[name] = await sessionIdOf(text);
    const file = `${projectDir}/${ids[name]}.jsonl`;
    await Deno.writeTextFile(file, text);
    const time = new Date(base + i * 60_000);
    await Deno.utime(file, time, time);
  }
  return {
    configDir,
    projectDir,
    ids,
    file: (name) => `${projectDir}/${ids[name]}.jsonl`,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

/** The texts of a message's content (text blocks, a string, or tool results as `result:`). */
export function textOf(message: { readonly content: unknown }): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) =>
    block.type === "text"
      ? block.text
      : block.type === "tool_result"
      ? `result:${typeof block.content === "string" ? block.content : ""}`
      : block.type === "tool_use"
      ? `tool:${block.name}`
      : block.type
  ).join("|");
}

/** Each message as `type:text` (`system:subtype` for system entries), for comparing conversations. */
export function texts(messages: readonly SessionMessage[]): string[] {
  return messages.map((m) => `${m.type}:${m.type === "system" ? m.subtype : textOf(m.message)}`);
}
