/**
 * The frames the benchmarks stream: realistic `stream_event` lines like the
 * real CLI's with `--include-partial-messages` (about 270 bytes each, 2 % of
 * them with a non-ASCII character), built deterministically so the fake CLI
 * and the JSON.parse limit see exactly the same text.
 *
 * @module
 */

/** The session id every fake frame carries. */
export const SESSION_ID = "cc496edb-cfee-4be8-8aea-7bd0c4485c4d";

/** A uuid-shaped id derived from a number (deterministic, 36 characters). */
export function fakeUuid(n: number): string {
  const hex = (n >>> 0).toString(16).padStart(8, "0");
  const mix = ((n * 2654435761) >>> 0).toString(16).padStart(8, "0");
  return `${hex}-${mix.slice(0, 4)}-4${mix.slice(4, 7)}-8${hex.slice(1, 4)}-${mix}${hex.slice(4)}`;
}

/**
 * The `i`th `stream_event` line (without its newline).
 *
 * @param i The frame index.
 * @returns One JSON text.
 */
export function streamEventLine(i: number): string {
  const text = i % 50 === 0 ? `r\u00e9ponse ${i % 97}` : `s a slow rep ${i % 97}`;
  return JSON.stringify({
    type: "stream_event",
    event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
    session_id: SESSION_ID,
    parent_tool_use_id: null,
    uuid: fakeUuid(i),
    api_message_id: "msg_fake_1",
  });
}

/**
 * The first `count` stream_event lines.
 *
 * @param count How many.
 * @returns The lines, without newlines.
 */
export function streamEventLines(count: number): string[] {
  const lines = new Array<string>(count);
  for (let i = 0; i < count; i++) lines[i] = streamEventLine(i);
  return lines;
}
