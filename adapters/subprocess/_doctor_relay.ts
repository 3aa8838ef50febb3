/**
 * The doctor's checks of a relay: `relay` (its `/health` answers, within
 * the bound), `relay-token` (a WebSocket upgrade with the token as the
 * bearer subprotocol opens; refused, the relay's reason is asked as
 * `remote()` asks it, `_refusal_probe.ts`), and, with `relay.origin`,
 * `relay-origin` (the relay's plain `GET` of `/v1` with that `Origin`,
 * answered as the upgrade would be: the origin is checked before the
 * token, so a 403 is the origin's refusal whatever the token). The
 * socket opened is closed at once, before any hello: no session starts.
 * The token is never printed.
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { excerptOf } from "../../src/errors.ts";
import { bearerProtocol, SUBPROTOCOL } from "../../src/wire/wire.ts";
import { askWhyRefused } from "../remote/_refusal_probe.ts";
import { hostOf } from "./_doctor_local.ts";
import type { DoctorCheck } from "./doctor.ts";
import type { DoctorContext } from "./_doctor_context.ts";

/** How long a socket is given to close (one still in its handshake waits for its end). */
const CLOSE_WAIT_MS = 1_000;

const RELAY_RUNS = "check the URL, and that the relay runs there (deno task relay)";

/**
 * The relay's lines: `relay`, then (when it answered) `relay-token`, and
 * `relay-origin` when an origin is given.
 *
 * @param context The doctor's context (its `relay` is set).
 * @returns The lines.
 */
export async function checkRelay(context: DoctorContext): Promise<DoctorCheck[]> {
  const relay = context.relay;
  if (relay === undefined) return [];
  let ws: URL;
  try {
    ws = new URL(relay.url);
    if (ws.protocol !== "ws:" && ws.protocol !== "wss:") throw new TypeError("not ws: or wss:");
  } catch (error) {
    return [{
      check: "relay",
      status: "fail",
      finding: `${relay.url} is not a relay URL (${messageOf(error)})`,
      fix: "pass the relay's WebSocket URL, as ws://host:port/v1 or wss://host/v1",
    }];
  }
  const host = hostOf(relay.url) ?? ws.host;
  let allowed = false;
  try {
    allowed = Deno.permissions.querySync({ name: "net", host }).state === "granted";
  } catch {
    // not a host Deno can name: the fetch says so
  }
  if (!allowed) {
    return [{
      check: "relay",
      status: "fail",
      finding: `not asked: Deno may not connect to ${host}`,
      fix: `run with --allow-net=${host}`,
    }];
  }
  const health = await checkHealth(ws, context);
  if (health.status !== "ok") return [health];
  const lines = [health, await checkToken(ws, relay.token, context)];
  if (relay.origin !== undefined) lines.push(await checkOrigin(ws, relay, context));
  return lines;
}

function httpOf(ws: URL, path?: string): string {
  const url = new URL(ws);
  url.protocol = ws.protocol === "wss:" ? "https:" : "http:";
  // The health beside the endpoint: /v1 → /health, /prefix/v1 → /prefix/health (a proxy's prefix).
  if (path !== undefined) {
    url.pathname = /\/v1\/?$/.test(url.pathname) ? url.pathname.replace(/\/v1\/?$/, path) : path;
  }
  url.search = "";
  return url.href;
}

/* A fetch within the probe's bound (and the caller's signal). */
async function boundedFetch(
  url: string,
  init: RequestInit,
  context: DoctorContext,
): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("no answer")), context.timeoutMs);
  const onAbort = (): void => controller.abort(context.signal?.reason);
  context.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await fetch(url, { ...init, signal: controller.signal });
  } finally {
    clearTimeout(timer);
    context.signal?.removeEventListener("abort", onAbort);
  }
}

async function checkHealth(ws: URL, context: DoctorContext): Promise<DoctorCheck> {
  const url = httpOf(ws, "/health");
  let response: Response;
  try {
    response = await boundedFetch(url, {}, context);
  } catch (error) {
    context.signal?.throwIfAborted();
    const why = error instanceof DOMException && error.name === "AbortError"
      ? `no answer within ${context.timeoutMs} ms`
      : messageOf(error);
    return {
      check: "relay",
      status: "fail",
      finding: `${url} unreachable: ${why}`,
      fix: RELAY_RUNS,
    };
  }
  const text = await response.text().catch(() => "");
  let health: unknown;
  try {
    health = JSON.parse(text);
  } catch {
    health = undefined;
  }
  const said = health as { ok?: unknown; sessions?: unknown } | undefined;
  if (!response.ok || typeof said?.ok !== "boolean") {
    return {
      check: "relay",
      status: "fail",
      finding: `${url} answered HTTP ${response.status}, not a relay's health` +
        (text.trim() ? ` (${excerptOf(text.trim(), 120)})` : ""),
      fix: RELAY_RUNS,
    };
  }
  if (!said.ok) {
    return {
      check: "relay",
      status: "fail",
      finding: `${url}: the relay is shutting down`,
      fix: "try again once it has restarted",
    };
  }
  const sessions = typeof said.sessions === "number" ? `, ${said.sessions} sessions` : "";
  return { check: "relay", status: "ok", finding: `${url} answers (ok${sessions})` };
}

/* Opens a socket with the token; resolves true once it opens (closed at once), false on an error. */
function upgrade(ws: URL, token: string, context: DoctorContext): Promise<boolean | "timeout"> {
  const { promise, resolve } = Promise.withResolvers<boolean | "timeout">();
  let socket: WebSocket;
  try {
    socket = new WebSocket(ws.href, [SUBPROTOCOL, bearerProtocol(token)]);
  } catch {
    return Promise.resolve(false);
  }
  const timer = setTimeout(() => resolve("timeout"), context.timeoutMs);
  const onAbort = (): void => resolve(false);
  context.signal?.addEventListener("abort", onAbort, { once: true });
  socket.onopen = () => resolve(true);
  socket.onerror = () => resolve(false);
  socket.onclose = () => resolve(false);
  return promise.finally(async () => {
    clearTimeout(timer);
    context.signal?.removeEventListener("abort", onAbort);
    if (socket.readyState === WebSocket.CLOSED) return;
    // A socket still connecting closes only once its handshake ends: waited for, within a bound.
    let wait: ReturnType<typeof setTimeout> | undefined;
    const closed = new Promise<void>((done) => {
      socket.onclose = () => done();
      socket.onerror = () => done();
      wait = setTimeout(done, CLOSE_WAIT_MS);
    });
    socket.close(1000, "doctor");
    await closed;
    clearTimeout(wait);
  });
}

async function checkToken(ws: URL, token: string, context: DoctorContext): Promise<DoctorCheck> {
  const opened = await upgrade(ws, token, context);
  context.signal?.throwIfAborted();
  if (opened === true) {
    return { check: "relay-token", status: "ok", finding: "the relay accepts the token" };
  }
  if (opened === "timeout") {
    return {
      check: "relay-token",
      status: "fail",
      finding: `the WebSocket upgrade did not answer within ${context.timeoutMs} ms`,
      fix: "check that a proxy in front of the relay passes WebSocket upgrades",
    };
  }
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(), context.timeoutMs);
  const refusal = await askWhyRefused(ws.href, token, bound.signal).finally(() =>
    clearTimeout(timer)
  );
  if (refusal !== undefined) {
    return {
      check: "relay-token",
      status: "fail",
      finding: `the relay refuses the token (${refusal.kind}): ` +
        refusal.message.replace(/^Cannot connect to the relay: /, ""),
      fix: "use a token the relay takes: one of its static tokens (DUPLEX_RELAY_TOKENS), or a " +
        "scoped token minted with its secret and not expired",
    };
  }
  return {
    check: "relay-token",
    status: "fail",
    finding: "the WebSocket upgrade failed, and the relay gave no reason",
    fix: "check that a proxy in front of the relay passes WebSocket upgrades, and the relay's log",
  };
}

async function checkOrigin(
  ws: URL,
  relay: { readonly token: string; readonly origin?: string },
  context: DoctorContext,
): Promise<DoctorCheck> {
  const origin = relay.origin ?? "";
  let response: Response;
  try {
    response = await boundedFetch(
      httpOf(ws),
      { headers: { authorization: `Bearer ${relay.token}`, origin } },
      context,
    );
  } catch (error) {
    context.signal?.throwIfAborted();
    return {
      check: "relay-origin",
      status: "fail",
      finding: `not checked: ${httpOf(ws)} did not answer (${messageOf(error)})`,
      fix: RELAY_RUNS,
    };
  }
  await response.body?.cancel().catch(() => {});
  if (response.status === 403) {
    return {
      check: "relay-origin",
      status: "fail",
      finding: `the relay refuses a browser from ${origin} (HTTP 403)`,
      fix: `add ${origin} to the relay's allowedOrigins (DUPLEX_RELAY_ORIGINS)`,
    };
  }
  return {
    check: "relay-origin",
    status: "ok",
    finding: `the relay accepts a browser from ${origin}`,
  };
}
