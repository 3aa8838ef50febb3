// This module is browser compatible.
/**
 * One turn of a session as server-sent events, for the edge examples
 * (`deno_deploy.ts`, `workerd/worker.ts`): the assistant's text as it arrives,
 * each permission decision, then the result.
 *
 * | event        | data (JSON)                                                              |
 * | ------------ | ------------------------------------------------------------------------ |
 * | `text`       | a piece of the assistant's text (a `content_block_delta`), as it streams |
 * | `permission` | `{ toolName, behavior }` once a tool request is decided                  |
 * | `result`     | `{ text, isError, subtype, sessionId, permissionDenials }`               |
 * | `error`      | `{ name, kind, message }` when the turn failed or was cancelled          |
 *
 * While the turn runs, a comment line (`: keep-alive`) goes out every
 * {@linkcode HEARTBEAT_MS}: workerd notices that a client left (and aborts
 * `request.signal`) only when it next writes to the response, so a turn that
 * streams nothing for a while (a tool running, a model thinking) would
 * otherwise go on for nobody. Proxies also drop idle streams.
 *
 * The session must run with `includePartialMessages` for `text` events.
 * Nothing here needs a runtime API: it runs in Deno, workerd, browsers.
 *
 * @module
 */

import { type DuplexSession, isDuplexError, type SessionEvent } from "@duplex/claude";

/** A turn being streamed. */
export interface StreamedTurn {
  /** The `text/event-stream` body. */
  readonly body: ReadableStream<Uint8Array>;
  /** Settles once the turn has ended and the stream is closed (never rejects). */
  readonly done: Promise<void>;
}

/** How often a comment line goes out while the turn runs, in milliseconds. */
export const HEARTBEAT_MS = 1_000;

/** The headers of a server-sent events response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
};

/**
 * The prompt of a request: the body of a `POST`, or `?prompt=` of a `GET`
 * (what an `EventSource` in a browser can send).
 *
 * @param request The HTTP request.
 * @returns The prompt, or undefined when there is none.
 */
export async function promptOf(request: Request): Promise<string | undefined> {
  const prompt = request.method === "POST"
    ? await request.text()
    : new URL(request.url).searchParams.get("prompt");
  return prompt ? prompt : undefined;
}

/**
 * Sends `prompt` on `session` and streams the turn as server-sent events.
 *
 * @param session A session started with `includePartialMessages`.
 * @param prompt The user's text.
 * @param signal Aborting it interrupts the turn in the CLI (pass the request's
 * signal: the client leaving then stops the turn).
 * @returns The body to respond with, and when the turn is over.
 */
export function streamTurn(
  session: DuplexSession,
  prompt: string,
  signal?: AbortSignal,
): StreamedTurn {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  const emit = (event: string, data: unknown): Promise<void> =>
    // A client that left makes writes fail: the turn goes on to its end regardless.
    writer.write(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`))
      .catch(() => {});
  const heartbeat = setInterval(() => {
    writer.write(encoder.encode(": keep-alive\n\n")).catch(() => {});
  }, HEARTBEAT_MS);
  const done = (async () => {
    const events = session.subscribe({ capacity: 4096 });
    const turn = session.send(prompt, signal ? { signal } : {});
    try {
      const relaying = relay(events, emit).catch(() => {});
      const { result } = await turn;
      await relaying;
      await emit("result", {
        text: result.text,
        isError: result.isError,
        subtype: result.subtype,
        sessionId: result.sessionId,
        permissionDenials: result.permissionDenials,
      });
    } catch (error) {
      await emit("error", {
        name: error instanceof Error ? error.name : typeof error,
        kind: isDuplexError(error) ? error.kind : undefined,
        message: error instanceof Error ? error.message : String(error),
      });
    } finally {
      clearInterval(heartbeat);
      events.unsubscribe();
      await writer.close().catch(() => {});
    }
  })();
  return { body: readable, done };
}

async function relay(
  events: AsyncIterable<SessionEvent>,
  emit: (event: string, data: unknown) => Promise<void>,
): Promise<void> {
  for await (const event of events) {
    if (event.type === "stream_event" && event.event.type === "content_block_delta") {
      const delta = event.event.delta as { type?: string; text?: string };
      if (delta.type === "text_delta" && delta.text) await emit("text", delta.text);
    } else if (event.type === "permission_resolved") {
      await emit("permission", { toolName: event.toolName, behavior: event.behavior });
    } else if (event.type === "result") {
      return;
    }
  }
}
