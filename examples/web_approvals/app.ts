/**
 * The web approvals server: one page, one {@linkcode DuplexSession}, every
 * permission request answered by a person clicking Allow or Deny.
 *
 * | route | what |
 * |---|---|
 * | `GET /` | the page (it holds no data; its script reads the token from the URL's `#token=`) |
 * | `GET /events?token=` | server-sent events: a `hello` (history, the turn in flight), then the session's events, waiting requests first |
 * | `POST /api/send` | `{ prompt }`: starts a turn (409 while one runs) |
 * | `POST /api/permission` | `{ id, behavior: "allow" \| "deny", always?: true, message? }`: `respondToPermission` |
 * | `GET /api/state` | `{ busy, pages, pending }` (`pending` from `session.pendingPermissions`), for scripts |
 *
 * One session per server: every page open on it shares the conversation,
 * and whoever answers a request first answers it for all.
 *
 * @module
 */

import {
  allow,
  deny,
  type DuplexSession,
  type FinalPermissionDecision,
  type TurnResult,
} from "@duplex/claude";
import {
  type CallerPolicy,
  checkCaller,
  COMMON_HEADERS,
  HttpError,
  json,
  newToken,
  pagePolicy,
  readJsonObject,
} from "./http_guard.ts";
import {
  type HistoryEntry,
  type PageEvent,
  PageEventMapper,
  permissionEvent,
  type TurnSummary,
} from "./page_events.ts";

/** Options of {@linkcode serveApprovals}. */
export interface ApprovalsOptions {
  /** The interface to bind. @default {"127.0.0.1"} */
  readonly hostname?: string;
  /** The port; 0 picks a free one. @default {0} */
  readonly port?: number;
  /** What runs behind the session, shown by the page ("claude", "stand-in"). */
  readonly backend: string;
  /** The largest request body. @default {65536} */
  readonly maxBodyBytes?: number;
  /** The most pages connected at once. @default {8} */
  readonly maxPages?: number;
}

/** A running server. */
export interface ApprovalsServer extends AsyncDisposable {
  /** The URL to open, with the token in its fragment (never sent, never logged). */
  readonly url: string;
  /** `http://<host>:<port>`. */
  readonly origin: string;
  /** The per-run token. */
  readonly token: string;
  /** Ends the pages' event streams and the turn in flight, then stops serving (bounded). */
  shutdown(): Promise<void>;
}

const PAGE = new URL("./page.html", import.meta.url);
const MAX_PROMPT = 32_000;
const HISTORY = 20;
/** What a page may leave unread before it is dropped (and reconnects). */
const PAGE_BUFFER_BYTES = 4 << 20;
const HEARTBEAT_MS = 15_000;

interface Page {
  push(event: PageEvent): void;
}

/**
 * Serves the page and its API for `session`, whose `onPermission` should
 * defer (`() => ({ behavior: "defer" })`) so requests wait for the page.
 *
 * @param session The one session this server drives.
 * @param options Where to listen, limits, the backend's name.
 * @returns The server, listening.
 */
export async function serveApprovals(
  session: DuplexSession,
  options: ApprovalsOptions,
): Promise<ApprovalsServer> {
  const page = await Deno.readTextFile(PAGE);
  const maxBodyBytes = options.maxBodyBytes ?? 65_536;
  const maxPages = options.maxPages ?? 8;
  const token = newToken();
  const closing = new AbortController();
  const pages = new Set<Page>();
  const history: HistoryEntry[] = [];
  let current: { id: number; prompt: string } | null = null;
  let turns = 0;

  const broadcast = (event: PageEvent) => pages.forEach((p) => p.push(event));

  function events(): Response {
    if (pages.size >= maxPages) throw new HttpError(503, `Cannot open more than ${maxPages} pages`);
    const stop = new AbortController();
    const signal = AbortSignal.any([stop.signal, closing.signal]);
    // The turn in flight, then every request still waiting: what a page that reconnects missed.
    const sub = session.subscribe({
      replayTurn: true,
      replayPending: true,
      capacity: 1024,
      signal,
    });
    const mapper = new PageEventMapper();
    const encoder = new TextEncoder();
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    let self: Page | undefined;
    const end = () => {
      stop.abort();
      clearInterval(heartbeat);
      if (self) pages.delete(self);
    };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const write = (text: string) => {
          if (stop.signal.aborted) return;
          try {
            controller.enqueue(encoder.encode(text));
            // A page that stopped reading is let go (bounded memory): it reconnects, starts over.
            if ((controller.desiredSize ?? 0) < 0) throw new RangeError("Page too slow");
          } catch {
            end();
            try {
              controller.close();
            } catch {
              // The page went away.
            }
          }
        };
        self = { push: (event) => write(`data: ${JSON.stringify(event)}\n\n`) };
        pages.add(self);
        write("retry: 1000\n\n");
        self.push({
          type: "hello",
          backend: options.backend,
          sessionId: session.sessionId,
          history,
          current,
        });
        heartbeat = setInterval(() => write(": ping\n\n"), HEARTBEAT_MS);
        (async () => {
          for await (const event of sub) for (const out of mapper.map(event)) self?.push(out);
        })().catch(() => {}).finally(() => {
          end();
          try {
            controller.close();
          } catch {
            // Already cancelled by the page.
          }
        });
      },
      cancel: end,
    }, new ByteLengthQueuingStrategy({ highWaterMark: PAGE_BUFFER_BYTES }));
    return new Response(body, {
      headers: { ...COMMON_HEADERS, "content-type": "text/event-stream; charset=utf-8" },
    });
  }

  function summarize(result: TurnResult): TurnSummary {
    const text = result.isError && result.text === ""
      ? result.errors.join("; ") || result.subtype
      : result.text;
    return {
      text,
      isError: result.isError,
      costUsd: result.costUsd,
      totalCostUsd: result.totalCostUsd,
      durationMs: result.durationMs,
    };
  }

  async function send(request: Request): Promise<Response> {
    const body = await readJsonObject(request, maxBodyBytes);
    const prompt = typeof body.prompt === "string" ? body.prompt.trim() : "";
    if (prompt === "" || prompt.length > MAX_PROMPT) {
      throw new HttpError(400, `Cannot send: prompt must be 1 to ${MAX_PROMPT} characters`);
    }
    if (current !== null || session.busy) {
      throw new HttpError(409, "Cannot send: a turn is running; wait for its result");
    }
    const turn = { id: ++turns, prompt };
    current = turn;
    broadcast({ type: "turn_start", ...turn });
    session.send(prompt, { signal: closing.signal }).then(
      (done) => summarize(done.result),
      (error: unknown) => ({
        text: error instanceof Error ? error.message : String(error),
        isError: true,
        costUsd: 0,
        totalCostUsd: 0,
        durationMs: 0,
      }),
    ).then((summary) => {
      // Kept for pages that open later, cut short: hello stays far below PAGE_BUFFER_BYTES.
      history.push({
        id: turn.id,
        prompt: clip(prompt, 2_000),
        summary: { ...summary, text: clip(summary.text, 4_000) },
      });
      if (history.length > HISTORY) history.shift();
      current = null;
      broadcast({ type: "turn_end", id: turn.id, summary });
    });
    return json(202, { id: turn.id });
  }

  async function answer(request: Request): Promise<Response> {
    const body = await readJsonObject(request, maxBodyBytes);
    const { id, behavior, always } = body;
    if (
      typeof id !== "string" || (behavior !== "allow" && behavior !== "deny") ||
      (always !== undefined && (always !== true || behavior !== "allow"))
    ) {
      throw new HttpError(400, 'Cannot answer: send { id, behavior: "allow" | "deny", always? }');
    }
    const waiting = session.pendingPermissions.find((pending) => pending.requestId === id);
    if (!waiting) throw new HttpError(409, "Cannot answer: the request is no longer waiting");
    let decision: FinalPermissionDecision;
    if (behavior === "deny") {
      const message = typeof body.message === "string" && body.message.trim() !== ""
        ? body.message.slice(0, 2_000)
        : "A person denied this from the web page";
      decision = deny(message, { decisionClassification: "user_reject" });
    } else if (always) {
      // The page offers it only where the card says so; the server checks it again.
      if (!permissionEvent(waiting).canAlways) {
        throw new HttpError(409, "Cannot always allow: the CLI offers no lasting rule for this");
      }
      decision = allow(undefined, {
        updatedPermissions: [...waiting.suggestions],
        decisionClassification: "user_permanent",
      });
    } else decision = allow(undefined, { decisionClassification: "user_temporary" });
    const answered = await session.respondToPermission(id, decision);
    if (!answered) {
      throw new HttpError(409, "Cannot answer: the request is no longer waiting");
    }
    return json(200, { answered });
  }

  function route(request: Request): Promise<Response> | Response {
    const { pathname } = new URL(request.url);
    const method = request.method;
    const want = (m: string) => {
      if (method !== m) throw new HttpError(405, `Cannot ${method} ${pathname}: use ${m}`);
    };
    switch (pathname) {
      case "/": {
        want("GET");
        checkCaller(request, policy, true);
        const nonce = newToken().slice(0, 22);
        return new Response(page.replaceAll("{{nonce}}", nonce), {
          headers: {
            ...COMMON_HEADERS,
            "content-type": "text/html; charset=utf-8",
            "content-security-policy": pagePolicy(nonce),
          },
        });
      }
      case "/events":
        want("GET");
        checkCaller(request, policy);
        return events();
      case "/api/send":
        want("POST");
        checkCaller(request, policy);
        return send(request);
      case "/api/permission":
        want("POST");
        checkCaller(request, policy);
        return answer(request);
      case "/api/state":
        want("GET");
        checkCaller(request, policy);
        return json(200, {
          busy: current !== null,
          pages: pages.size,
          pending: session.pendingPermissions.map(permissionEvent),
        });
      default:
        throw new HttpError(404, `Cannot find ${pathname}`);
    }
  }

  const server = Deno.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    onListen() {},
  }, async (request) => {
    try {
      return await route(request);
    } catch (error) {
      if (error instanceof HttpError) return json(error.status, { error: error.message });
      return json(500, { error: error instanceof Error ? error.message : String(error) });
    }
  });
  const { hostname, port } = server.addr;
  const wildcard = hostname === "0.0.0.0" || hostname === "::";
  const shown = wildcard ? "127.0.0.1" : hostname;
  const origin = `http://${shown.includes(":") ? `[${shown}]` : shown}:${port}`;
  const hosts = new Set(
    wildcard ? [] : [new URL(origin).host, `localhost:${port}`, `127.0.0.1:${port}`],
  );
  // Requests arrive only after this line runs: route() reads it.
  const policy: CallerPolicy = { token, origin, hosts };

  let stopped: Promise<void> | undefined;
  function shutdown(): Promise<void> {
    stopped ??= (async () => {
      closing.abort(new Error("The server is shutting down"));
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        server.shutdown(),
        new Promise((resolve) => (timer = setTimeout(resolve, 5_000))),
      ]);
      clearTimeout(timer);
    })();
    return stopped;
  }
  return {
    url: `${origin}/#token=${token}`,
    origin,
    token,
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
