/**
 * The relay's HTTP answers: `/health`, the refusals while it shuts down or
 * holds too many handshakes, and those on `/v1` before any WebSocket: a refused origin or
 * credential is answered with HTTP 403 / 401 and the reason in the body, so
 * that no frame of an anonymous client is ever read (upgraded, Deno reads
 * each frame in full, up to 64 MiB, however the relay refuses it after).
 *
 * A client's WebSocket cannot read a failed handshake's response (a browser
 * sees only a close 1006), so the same URL answers a plain `GET` with the
 * bearer token in an `Authorization` header the same way: `remote()` asks it
 * once when a connection fails before it opens, to tell "refused" from
 * "unreachable". A browser's `GET` from another origin needs CORS: the
 * preflight (`OPTIONS`) and every such answer allow any origin, without
 * credentials (the body says only why the request was refused).
 *
 * @module
 */

import type { Refusal } from "../../src/wire/wire.ts";

/** The HTTP status of each refusal that comes before the upgrade. */
const STATUS: Readonly<Record<string, number>> = { unauthorized: 401, "not_permitted": 403 };

/** What every answer of `/v1` over plain HTTP carries: readable from any origin, never cached. */
const CORS = { "access-control-allow-origin": "*", "cache-control": "no-store" } as const;

/**
 * The subprotocols a request offers.
 *
 * @param request The request.
 * @returns Each offered subprotocol, trimmed.
 */
export function offeredProtocols(request: Request): string[] {
  return (request.headers.get("sec-websocket-protocol") ?? "")
    .split(",").map((item) => item.trim()).filter((item) => item !== "");
}

/**
 * The HTTP status a refusal before the upgrade is answered with.
 *
 * @param refusal The gate's refusal (`unauthorized`, `not_permitted`).
 * @returns 401, 403 (400 for anything else).
 */
export function statusOf(refusal: Refusal): number {
  return STATUS[refusal.kind] ?? 400;
}

/**
 * The answer to a refused request: its status, and the refusal as the wire's
 * `error` message in the body (`{"t":"error","kind":…,"message":…}`).
 *
 * @param refusal The gate's refusal.
 * @returns The response.
 */
export function refusalResponse(refusal: Refusal): Response {
  const status = statusOf(refusal);
  const body = JSON.stringify({ t: "error", kind: refusal.kind, message: refusal.message });
  return new Response(`${body}\n`, {
    status,
    headers: {
      ...CORS,
      "content-type": "application/json; charset=utf-8",
      ...(status === 401 && { "www-authenticate": 'Bearer realm="duplex-claude"' }),
    },
  });
}

/**
 * The answer to a plain request of `/v1` whose origin and credential are
 * good: it takes WebSocket connections only.
 *
 * @returns HTTP 426.
 */
export function upgradeRequired(): Response {
  return new Response("This endpoint takes WebSocket connections\n", {
    status: 426,
    headers: { ...CORS, upgrade: "websocket" },
  });
}

/**
 * The answer to a browser's CORS preflight of that plain `GET` (it carries
 * an `Authorization` header).
 *
 * @returns HTTP 204 allowing `GET` with `Authorization` from any origin.
 */
export function preflightResponse(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS,
      "access-control-allow-methods": "GET",
      "access-control-allow-headers": "authorization",
      "access-control-max-age": "600",
    },
  });
}

/** What `/health` tells. */
export interface Health {
  /** False once the relay is closing. */
  readonly ok: boolean;
  /** The sessions it holds. */
  readonly sessions: number;
  /** The sessions it keeps hibernated. */
  readonly hibernated: number;
}

/**
 * The answer of `/health`.
 *
 * @param request The request (`GET` or `HEAD`).
 * @param health What to tell.
 * @returns The health as JSON; HTTP 405 for another method.
 */
export function healthResponse(request: Request, health: Health): Response {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response("Method not allowed\n", { status: 405, headers: { allow: "GET" } });
  }
  return Response.json(health);
}

/**
 * The answer to a request while the relay shuts down.
 *
 * @returns HTTP 503.
 */
export function shuttingDown(): Response {
  return new Response("The relay is shutting down\n", { status: 503 });
}

/**
 * The answer to an upgrade while `maxPendingConnections` connections are in
 * their handshake.
 *
 * @param max The relay's `maxPendingConnections`.
 * @returns HTTP 503, to be retried after a second.
 */
export function handshakesFull(max: number): Response {
  return new Response(
    `Cannot accept the connection: ${max} connections are still in their ` +
      `handshake (the relay's maxPendingConnections); try again later\n`,
    { status: 503, headers: { "retry-after": "1" } },
  );
}
