/**
 * Who may connect to the relay, and as whom: the origin check, then the
 * bearer token (a static token, or a scoped JWT), resolved to a credential:
 * the owner its sessions are bound to, and the policy it gets.
 *
 * @module
 */

import { BEARER_PREFIX, Refusal, timingSafeEqual, tokenFromProtocol } from "../../src/wire/wire.ts";
import { type CheckedPolicy, narrowPolicy } from "./_policy.ts";
import type { Config } from "./_relay_config.ts";

/** Who a connection speaks for. */
export interface Credential {
  /**
   * The owner of the sessions it starts: `token:<the static token>` or
   * `sub:<the JWT's subject>`. Only the same owner can resume them.
   */
  readonly owner: string;
  /** What it may spawn: the relay's policy, narrowed by a scoped token's. */
  readonly policy: CheckedPolicy;
}

/** The outcome of a connection's admission: a credential, or the refusal to send. */
export type Access =
  | { readonly ok: true; readonly credential: Credential }
  | { readonly ok: false; readonly refusal: Refusal };

/** Compared with the asking owner when nothing is there, so that both answers take as long. */
const NOBODY = `nobody:${crypto.randomUUID()}`;

/**
 * Whether `asking` is the owner of something found by a token: one
 * timing-safe comparison either way (with nobody when nothing was found), so
 * another owner's and an unknown token look alike.
 *
 * @param owner The owner of what the token found, `undefined` for nothing.
 * @param asking The asking credential's owner (or its hash, as `owner` is).
 */
export function ownedBy(owner: string | undefined, asking: string): boolean {
  return timingSafeEqual(owner ?? NOBODY, asking) && owner !== undefined;
}

/** A JWT's shape: three base64url parts. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Decides, for each upgrade request, whether and as whom it may connect. */
export class Gate {
  readonly #config: Config;

  /** @param config The relay's checked options. */
  constructor(config: Config) {
    this.#config = config;
  }

  /**
   * Admits a request: its origin (when the relay lists origins), then its token.
   *
   * @param request The upgrade request.
   * @param offered The subprotocols it offers.
   * @returns The credential, or the refusal (`not_permitted` for an origin, `unauthorized`),
   * which the relay answers with HTTP 403 / 401 before any upgrade.
   */
  async admit(request: Request, offered: readonly string[]): Promise<Access> {
    const origins = this.#config.allowedOrigins;
    const origin = request.headers.get("origin");
    if (origins !== undefined && origin !== null && !origins.has(origin)) {
      return refuse(
        "not_permitted",
        `Cannot connect to the relay: the origin ${
          origin.slice(0, 60)
        } is not in its allowedOrigins`,
      );
    }
    const token = bearerOf(offered, request.headers.get("authorization"));
    if (token === undefined) {
      return refuse(
        "unauthorized",
        "Cannot connect to the relay: no bearer token; pass a token the relay takes",
      );
    }
    const match = this.#staticMatch(token);
    if (match !== undefined) {
      return { ok: true, credential: { owner: `token:${match}`, policy: this.#config.policy } };
    }
    const verifier = this.#config.verifier;
    if (verifier === undefined || !JWT_SHAPE.test(token)) {
      return refuse(
        "unauthorized",
        "Cannot connect to the relay: the bearer token is wrong; pass a token the relay was " +
          `started with${verifier === undefined ? "" : ", or a scoped token it can verify"}`,
      );
    }
    const check = await verifier.verify(token);
    if (!check.ok) return refuse("unauthorized", `Cannot connect to the relay: ${check.reason}`);
    const { subject, policy } = check.token;
    return {
      ok: true,
      credential: { owner: `sub:${subject}`, policy: narrowPolicy(this.#config.policy, policy) },
    };
  }

  /** The static token equal to `token`, compared with every one without stopping at a match. */
  #staticMatch(token: string): string | undefined {
    let match: string | undefined;
    for (const expected of this.#config.tokens) {
      if (timingSafeEqual(expected, token)) match ??= expected;
    }
    return match;
  }
}

/** The bearer token of a request: from the subprotocol, else the `Authorization` header. */
function bearerOf(offered: readonly string[], authorization: string | null): string | undefined {
  let token: string | undefined;
  for (const protocol of offered) {
    if (protocol.startsWith(BEARER_PREFIX)) token ??= tokenFromProtocol(protocol);
  }
  if (token === undefined && authorization !== null) {
    const match = /^Bearer[ \t]+(\S.*)$/i.exec(authorization.trim());
    if (match) token = match[1];
  }
  return token;
}

function refuse(kind: "unauthorized" | "not_permitted", message: string): Access {
  return { ok: false, refusal: new Refusal(kind, message) };
}
