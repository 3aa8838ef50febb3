// This module is browser compatible.
/**
 * {@linkcode SYSTEM_PROMPT_DYNAMIC_BOUNDARY}: the marker that splits a system
 * prompt into a part the API may cache across sessions and a part it does not.
 *
 * @module
 */

/**
 * The CLI's cache boundary, with the official SDK's name and value: put it as
 * one element of a parts `systemPrompt` (`start({ systemPrompt: [stable,
 * SYSTEM_PROMPT_DYNAMIC_BOUNDARY, perSession] })`), or as a line of its own in
 * a string one. What comes before it gets the global cache scope, what comes
 * after does not.
 *
 * @example A system prompt whose first part is cached across sessions
 * ```ts
 * import { SYSTEM_PROMPT_DYNAMIC_BOUNDARY } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const systemPrompt = ["You review Go code.", SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "Repo: acme/api"];
 * assert.equal(systemPrompt[1], "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__");
 * ```
 */
export const SYSTEM_PROMPT_DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__";
