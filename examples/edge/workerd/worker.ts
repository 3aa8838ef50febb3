/**
 * A Cloudflare Worker (here run by `workerd`, the open-source Workers runtime)
 * that drives a `claude` the relay runs on another host. Nothing in it spawns
 * a process or touches a Deno API.
 *
 * Run it (a relay must be up: `deno task relay`):
 *
 * ```sh
 * deno bundle --platform browser -o examples/edge/workerd/worker.js examples/edge/workerd/worker.ts
 * DUPLEX_RELAY_URL=ws://127.0.0.1:8787/v1 DUPLEX_RELAY_TOKEN=… \
 *   npx workerd serve examples/edge/workerd/config.capnp
 * curl -N --data 'Say hi' http://127.0.0.1:8080/turn
 * curl -N --data 'Say hi' http://127.0.0.1:8080/conversations/alice/turn
 * ```
 *
 * Routes (the prompt is the body of a POST or `?prompt=` of a GET; the answer
 * is `text/event-stream`, see `../stream_turn.ts`):
 *
 * - `/turn`: a session for this request only, closed after the turn.
 *   The client leaving interrupts the turn (`request.signal`, which workerd
 *   aborts on a disconnect with the `enable_request_signal` flag).
 * - `/conversations/<name>/turn`: the Durable Object `<name>` holds one
 *   session across requests: the same `claude` answers every turn of the
 *   conversation. A session's socket belongs to the I/O context that opened
 *   it; in a Worker that is one request, in a Durable Object it is the object.
 *
 * Permissions are decided here, by {@linkcode workerPolicy}.
 *
 * @module
 */

import { DuplexSession, type PermissionDecision, type PermissionRequest } from "@duplex/claude";
import { remote } from "@duplex/claude/remote";
import { promptOf, SSE_HEADERS, streamTurn } from "../stream_turn.ts";

/** The bindings of `config.capnp`. */
export interface Env {
  /** The relay's WebSocket URL (`fromEnvironment`: null when the variable is unset). */
  readonly DUPLEX_RELAY_URL: string | null;
  /** The relay's token. */
  readonly DUPLEX_RELAY_TOKEN: string | null;
  /** The Durable Object namespace of {@linkcode Conversation}. */
  readonly CONVERSATIONS: DurableObjectNamespace;
}

/** The part of workerd's `ExecutionContext` used here. */
export interface ExecutionContext {
  /** Keeps the invocation alive until the promise settles. */
  waitUntil(promise: Promise<unknown>): void;
}

/** The part of a Durable Object namespace binding used here. */
export interface DurableObjectNamespace {
  /** The id of the object with this name. */
  idFromName(name: string): unknown;
  /** A stub that forwards requests to the object. */
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

/** The part of a Durable Object's state used here. */
export interface DurableObjectState {
  /** Keeps the object alive until the promise settles. */
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * The worker's permission policy: `Write` of a `.txt` file is allowed, every
 * other tool request is denied with the reason.
 *
 * @param request What the CLI asks to run.
 * @returns The decision.
 */
export function workerPolicy(request: PermissionRequest): PermissionDecision {
  const path = request.input.file_path;
  if (request.toolName === "Write" && typeof path === "string" && path.endsWith(".txt")) {
    return { behavior: "allow" };
  }
  return {
    behavior: "deny",
    message: `The worker's policy allows only Write to .txt files, not ${request.toolName}`,
  };
}

function start(env: Env): Promise<DuplexSession> {
  if (!env.DUPLEX_RELAY_URL || !env.DUPLEX_RELAY_TOKEN) {
    throw new Error("Cannot reach the relay: set DUPLEX_RELAY_URL and DUPLEX_RELAY_TOKEN");
  }
  return DuplexSession.start({
    transport: remote({
      url: env.DUPLEX_RELAY_URL,
      token: env.DUPLEX_RELAY_TOKEN,
      spawn: { includePartialMessages: true },
    }),
    onPermission: workerPolicy,
  });
}

function failure(error: unknown): Response {
  const message = error instanceof Error ? error.message : String(error);
  return Response.json({ error: message }, { status: 502 });
}

export default {
  /**
   * Routes a request (see the module doc).
   *
   * @param request The HTTP request.
   * @param env The bindings.
   * @param ctx The invocation's context.
   * @returns The response.
   */
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/health") return new Response("ok\n");
    const conversation = /^\/conversations\/([\w-]{1,64})\/turn$/.exec(pathname);
    if (conversation) {
      const stub = env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(conversation[1]!));
      return await stub.fetch(request);
    }
    if (pathname !== "/turn") return new Response("Not found\n", { status: 404 });
    const prompt = await promptOf(request);
    if (prompt === undefined) return new Response("No prompt\n", { status: 400 });
    let session: DuplexSession;
    try {
      session = await start(env);
    } catch (error) {
      return failure(error);
    }
    const turn = streamTurn(session, prompt, request.signal);
    ctx.waitUntil(turn.done.finally(() => session.close()));
    return new Response(turn.body, { headers: SSE_HEADERS });
  },
};

/** A Durable Object that holds one session across the requests of a conversation. */
export class Conversation {
  readonly #state: DurableObjectState;
  readonly #env: Env;
  #session: Promise<DuplexSession> | undefined;

  /**
   * @param state The object's state.
   * @param env The bindings.
   */
  constructor(state: DurableObjectState, env: Env) {
    this.#state = state;
    this.#env = env;
  }

  /**
   * Runs one turn of the conversation on the object's session (started on
   * the first request, started again if its `claude` has ended).
   *
   * @param request The forwarded request; its body is the prompt.
   * @returns The turn as server-sent events.
   */
  async fetch(request: Request): Promise<Response> {
    const prompt = await promptOf(request);
    if (prompt === undefined) return new Response("No prompt\n", { status: 400 });
    let session: DuplexSession;
    try {
      session = await this.#open();
    } catch (error) {
      return failure(error);
    }
    const turn = streamTurn(session, prompt, request.signal);
    this.#state.waitUntil(turn.done);
    return new Response(turn.body, { headers: SSE_HEADERS });
  }

  #open(): Promise<DuplexSession> {
    // Chained, so that requests arriving together share one session.
    const previous = this.#session;
    this.#session = (async () => {
      const current = await previous?.catch(() => undefined);
      return current?.alive ? current : await start(this.#env);
    })();
    return this.#session;
  }
}
