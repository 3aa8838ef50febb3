/**
 * Who may read the relay's `/health`: anyone (the default), or only a
 * request with a bearer token: one of the health-only tokens (a load
 * balancer's, good for nothing else) or any token the relay admits at `/v1`.
 * A request without one gets a bare 401 that tells nothing of the relay.
 *
 * @module
 */

import { timingSafeEqual } from "../../src/wire/wire.ts";
import type { Gate } from "./_access.ts";
import type { RelayHealthOptions } from "./relay_options.ts";

/** The checked `health` option. */
export interface HealthAccess {
  /** `open`: anyone may read `/health`; `token`: only with a bearer token. */
  readonly access: "open" | "token";
  /** The tokens that may read `/health` and nothing else. */
  readonly tokens: readonly string[];
}

/**
 * Checks the relay's `health` option.
 *
 * @param health The option as given.
 * @returns The checked access; `access` is `token` when `tokens` are given and it is not set.
 * @throws {TypeError} For a value of the wrong type, an empty token, or
 * `access: "open"` with tokens (they would be good for nothing).
 */
export function checkHealth(health: RelayHealthOptions | undefined): HealthAccess {
  if (health === undefined) return { access: "open", tokens: [] };
  if (typeof health !== "object" || health === null) {
    throw new TypeError("Cannot serve the relay: health must be an object");
  }
  const tokens = health.tokens ?? [];
  if (
    !Array.isArray(tokens) || tokens.some((token) => typeof token !== "string" || token === "")
  ) {
    throw new TypeError(
      "Cannot serve the relay: health.tokens must be an array of non-empty strings",
    );
  }
  const access = health.access ?? (tokens.length > 0 ? "token" : "open");
  if (access !== "open" && access !== "token") {
    throw new TypeError(
      `Cannot serve the relay: health.access must be "open" or "token", got ${String(access)}`,
    );
  }
  if (access === "open" && tokens.length > 0) {
    throw new TypeError(
      'Cannot serve the relay: health.tokens are given with health.access "open"; ' +
        'drop them, or use access "token"',
    );
  }
  return { access, tokens: [...tokens] };
}

/**
 * Whether a `/health` request may read the relay's health.
 *
 * @param request The request.
 * @param health The checked `health` option.
 * @param gate The relay's gate, for the tokens it admits at `/v1`.
 * @returns True when the health is open, or the request carries a token that reads it.
 */
export async function mayReadHealth(
  request: Request,
  health: HealthAccess,
  gate: Gate,
): Promise<boolean> {
  if (health.access === "open") return true;
  const authorization = request.headers.get("authorization");
  const match = authorization === null ? null : /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization);
  if (match === null) return false;
  const token = match[1]!;
  let found = false;
  for (const expected of health.tokens) found = timingSafeEqual(expected, token) || found;
  if (found) return true;
  // Only the token decides: an Origin header (a browser's) is not this question's.
  const headers = new Headers({ authorization: `Bearer ${token}` });
  const bare = new Request(request.url, { headers });
  return (await gate.admit(bare, [])).ok;
}

/**
 * The answer to a `/health` request without a token that reads it: a bare
 * 401, nothing about the relay in it.
 *
 * @returns HTTP 401.
 */
export function healthUnauthorized(): Response {
  return new Response("Unauthorized\n", {
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="health"' },
  });
}
