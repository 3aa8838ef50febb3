/**
 * Reads a `text/event-stream` response as the edge examples write it
 * (`examples/edge/stream_turn.ts`), with the time each event arrived.
 *
 * @module
 */

/** One server-sent event. */
export interface SseEvent {
  /** Its `event:` name (`message` when there is none). */
  readonly event: string;
  /** Its `data:` lines, joined with newlines, parsed as JSON. */
  readonly data: unknown;
}

/**
 * The events of a stream, in order, as they arrive; comment lines (`: …`)
 * are skipped. Ends with the stream.
 *
 * @param body The response body.
 * @returns The events.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  let pending = "";
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let end: number;
    while ((end = pending.indexOf("\n\n")) >= 0) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}

/** A turn read to its end: the text pieces, permission decisions, and the result or error. */
export interface ReadTurn {
  /** The `text` events, in order. */
  readonly texts: string[];
  /** The `permission` events. */
  readonly permissions: { toolName: string; behavior: string }[];
  /** The `result` event's data, if one came. */
  readonly result: Record<string, unknown> | undefined;
  /** The `error` event's data, if one came. */
  readonly error: Record<string, unknown> | undefined;
}

/**
 * Reads a whole turn. `onText` sees each text piece as it arrives (before
 * the rest of the stream is read).
 *
 * @param body The response body.
 * @param onText Called on each text piece, in order.
 * @returns What the stream held.
 */
export async function readTurn(
  body: ReadableStream<Uint8Array>,
  onText?: (text: string, index: number) => void,
): Promise<ReadTurn> {
  const texts: string[] = [];
  const permissions: { toolName: string; behavior: string }[] = [];
  let result: Record<string, unknown> | undefined;
  let error: Record<string, unknown> | undefined;
  for await (const { event, data } of readSse(body)) {
    if (event === "text") {
      onText?.(String(data), texts.length);
      texts.push(String(data));
    } else if (event === "permission") {
      permissions.push(data as { toolName: string; behavior: string });
    } else if (event === "result") {
      result = data as Record<string, unknown>;
    } else if (event === "error") {
      error = data as Record<string, unknown>;
    }
  }
  return { texts, permissions, result, error };
}

/** The whole text of the fake API's `[[stall]]` reply, after which it holds the stream open. */
export const STALLED_TEXT = "Starting a long answer that never ends";

/**
 * Reads a `[[stall]]` turn until its whole text has arrived: from then on
 * the model is silent and nothing of the turn is written to the client
 * (only the handler's keep-alive comments).
 *
 * @param body The response body.
 * @returns Nothing, once the text is complete; the stream is left unread.
 */
export async function readUntilSilent(body: ReadableStream<Uint8Array>): Promise<void> {
  let text = "";
  for await (const event of readSse(body)) {
    if (event.event === "text") text += String(event.data);
    if (text === STALLED_TEXT) return;
  }
  throw new Error(`Cannot see the stalled reply: the stream ended after ${JSON.stringify(text)}`);
}
