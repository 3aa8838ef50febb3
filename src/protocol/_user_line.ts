// This module is browser compatible.
/* The uuid of a user line, read from its JSON text (the relay's re-sent lines, the remote transport's turns). */

/**
 * The `uuid` of a user line (`{"type":"user",…,"uuid":…}`), else undefined.
 * Only a line that names a `"uuid"` is parsed.
 *
 * @param line One JSON text, as written to the CLI.
 * @returns The uuid, or undefined for another line, one without a string uuid, or bad JSON.
 */
export function userLineUuid(line: string): string | undefined {
  if (!line.includes('"uuid"')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== "object" || value === null) return undefined;
    const { type, uuid } = value as Record<string, unknown>;
    return type === "user" && typeof uuid === "string" ? uuid : undefined;
  } catch {
    return undefined;
  }
}
