// This module is browser compatible.
/* The check of a relay token's `policy` claim, for minting and for verifying alike. */

import { isRecord } from "../_values.ts";
import type { RelayTokenPolicy } from "./relay_token.ts";

/** What checking a policy claim gives: the policy, or why it is refused. */
export type PolicyCheck =
  | { readonly ok: true; readonly policy: RelayTokenPolicy }
  | { readonly ok: false; readonly reason: string };

const LISTS = ["models", "permissionModes"] as const;
const FLAGS = ["allowResume", "allowPartialMessages", "exposePid"] as const;
const FIELDS: ReadonlySet<string> = new Set([...LISTS, ...FLAGS, "maxTurns", "cwd"]);

/**
 * Checks a policy claim. A field this version does not know refuses the whole
 * claim: it may narrow something, and ignoring it would widen the token.
 *
 * @param value The claim (unchecked).
 * @returns A copy holding only the known fields, or the reason it is refused.
 */
export function checkTokenPolicy(value: unknown): PolicyCheck {
  if (!isRecord(value)) return refused("the policy must be an object");
  for (const key of Object.keys(value)) {
    if (!FIELDS.has(key)) {
      return refused(`the policy field ${JSON.stringify(key.slice(0, 40))} is not known`);
    }
  }
  const policy: Record<string, unknown> = {};
  for (const name of LISTS) {
    const list = value[name];
    if (list === undefined) continue;
    if (
      !Array.isArray(list) || list.length > 64 ||
      list.some((item) => typeof item !== "string" || item === "" || item.length > 128)
    ) {
      return refused(`the policy's ${name} must be an array of at most 64 non-empty strings`);
    }
    policy[name] = [...list];
  }
  for (const name of FLAGS) {
    const flag = value[name];
    if (flag === undefined) continue;
    if (typeof flag !== "boolean") return refused(`the policy's ${name} must be a boolean`);
    policy[name] = flag;
  }
  const { maxTurns, cwd } = value;
  if (maxTurns !== undefined) {
    if (!(typeof maxTurns === "number" && Number.isSafeInteger(maxTurns) && maxTurns > 0)) {
      return refused("the policy's maxTurns must be a positive integer");
    }
    policy.maxTurns = maxTurns;
  }
  if (cwd !== undefined) {
    if (
      typeof cwd !== "string" || cwd.length > 1024 || cwd.includes("\0") ||
      /^([\\/]|[A-Za-z]:)/.test(cwd)
    ) {
      return refused("the policy's cwd must be a path relative to the relay's workspace");
    }
    policy.cwd = cwd;
  }
  return { ok: true, policy: policy as RelayTokenPolicy };
}

function refused(reason: string): PolicyCheck {
  return { ok: false, reason };
}
