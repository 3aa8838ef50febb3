// This module is browser compatible.
/**
 * Elicitation: an MCP server asks the user for input through the CLI.
 *
 * @module
 */

import { isRecord } from "../_values.ts";

/** What an MCP server asks. */
export interface ElicitationRequest {
  /** The MCP server asking. */
  readonly serverName: string;
  /** What it asks the user. */
  readonly message: string;
  /** `"form"` (answer with `content` matching `requestedSchema`) or `"url"` (open `url`). */
  readonly mode: string | undefined;
  /** The URL to open, in `"url"` mode. */
  readonly url: string | undefined;
  /** The elicitation's id, when the server gave one. */
  readonly elicitationId: string | undefined;
  /** The JSON schema of the expected answer, for forms. */
  readonly requestedSchema: Record<string, unknown> | undefined;
  /** The request as the CLI sent it. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** The user's answer. */
export interface ElicitationResult {
  /** Accept (with `content`), decline, or cancel the request. */
  action: "accept" | "decline" | "cancel";
  /** The answer, matching `requestedSchema`, with `"accept"`. */
  content?: Record<string, unknown>;
}

/** Answers elicitations. The default declines them all. */
export type ElicitationHandler = (
  request: ElicitationRequest,
  context: { signal: AbortSignal },
) => ElicitationResult | Promise<ElicitationResult>;

/**
 * Reads the CLI's `elicitation` request body.
 *
 * @param body The request body.
 * @returns The elicitation request.
 */
export function elicitationFrom(body: Record<string, unknown>): ElicitationRequest {
  const str = (v: unknown): string | undefined => typeof v === "string" ? v : undefined;
  return {
    serverName: str(body.mcp_server_name) ?? "",
    message: str(body.message) ?? "",
    mode: str(body.mode),
    url: str(body.url),
    elicitationId: str(body.elicitation_id),
    requestedSchema: isRecord(body.requested_schema) ? body.requested_schema : undefined,
    raw: body,
  };
}

/**
 * Checks an elicitation handler's answer.
 *
 * @param value What the handler returned.
 * @returns The wire payload.
 * @throws {TypeError} When it is not an answer.
 */
export function elicitationPayload(value: unknown): Record<string, unknown> {
  if (!isRecord(value) || !["accept", "decline", "cancel"].includes(String(value.action))) {
    throw new TypeError(
      'Elicitation handler must return { action: "accept" | "decline" | "cancel", content? }',
    );
  }
  if (value.content !== undefined && !isRecord(value.content)) {
    throw new TypeError("Elicitation handler returned a content that is not an object");
  }
  return value.content === undefined
    ? { action: value.action }
    : { action: value.action, content: value.content };
}
