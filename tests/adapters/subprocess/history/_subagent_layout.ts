/**
 * A config folder laid out as the CLI lays out a session that ran
 * subagents (`<session>/subagents/agent-<id>.jsonl` and `.meta.json`, one
 * nested), for the history tests and the SDK parity test.
 *
 * @module
 */

/** The session's id. */
export const SESSION = "7e862e42-2038-43dc-810e-dd243155dc0f";
/** Its project folder's name. */
export const PROJECT = "-work-app";

/** A JSONL line. */
export function line(entry: Record<string, unknown>): string {
  return `${JSON.stringify(entry)}\n`;
}

/** A user or assistant entry of the session. */
export function message(
  type: "user" | "assistant",
  uuid: string,
  parentUuid: string | null,
  content: unknown,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type,
    uuid,
    parentUuid,
    sessionId: SESSION,
    timestamp: "2026-01-01T10:00:00.000Z",
    message: { role: type, content },
    ...more,
  };
}

/** A config folder (`<root>/.claude`) with one session that ran two subagents, one nested. */
export async function layout(root: string): Promise<{ configDir: string; project: string }> {
  const configDir = `${root}/.claude`;
  const project = `${configDir}/projects/${PROJECT}`;
  await Deno.mkdir(`${project}/${SESSION}/subagents/nested`, { recursive: true });
  await Deno.writeTextFile(
    `${project}/${SESSION}.jsonl`,
    line(message("user", "m1", null, "Run the agents", { timestamp: "2026-01-01T09:00:00.000Z" })) +
      line(message("assistant", "m2", "m1", [{ type: "text", text: "Done" }])),
  );
  const agent = (id: string, prompt: string) =>
    line(message("user", `${id}-1`, null, prompt, { isSidechain: true, agentId: id })) +
    line({ type: "attachment", uuid: `${id}-x`, parentUuid: `${id}-1`, isSidechain: true }) +
    line(message("assistant", `${id}-2`, `${id}-x`, [{ type: "text", text: `Echo: ${prompt}` }], {
      isSidechain: true,
      agentId: id,
    }));
  await Deno.writeTextFile(`${project}/${SESSION}/subagents/agent-a1.jsonl`, agent("a1", "one"));
  await Deno.writeTextFile(
    `${project}/${SESSION}/subagents/agent-a1.meta.json`,
    JSON.stringify({ agentType: "general-purpose", toolUseId: "toolu_1" }),
  );
  await Deno.writeTextFile(
    `${project}/${SESSION}/subagents/nested/agent-b2.jsonl`,
    agent("b2", "two"),
  );
  await Deno.writeTextFile(
    `${project}/${SESSION}/subagents/nested/agent-b2.meta.json`,
    JSON.stringify({ toolUseId: "toolu_2", parentAgentId: "a1" }),
  );
  await Deno.writeTextFile(`${project}/${SESSION}/subagents/notes.txt`, "not an agent");
  return { configDir, project };
}
