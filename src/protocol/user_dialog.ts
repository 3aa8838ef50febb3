// This module is browser compatible.
/**
 * User dialogs: the CLI asks the host to render a blocking dialog
 * (`request_user_dialog`, for example `"refusal_fallback_prompt"` when the
 * model refused and a fallback model could retry) and waits for the user's
 * choice. The CLI sends only the kinds the host declared in `initialize`
 * (`supportedDialogKinds`); each kind has its own payload and result shape,
 * which the protocol carries opaquely. The types are the official SDK's
 * (`UserDialogRequest`, `UserDialogResult`, `OnUserDialog`).
 *
 * @example Answer the refusal fallback prompt, cancel any other kind
 * ```ts
 * import type { UserDialogHandler } from "@duplex/claude/protocol";
 *
 * const onUserDialog: UserDialogHandler = (request) =>
 *   request.dialogKind === "refusal_fallback_prompt"
 *     ? { behavior: "completed", result: "retry" }
 *     : { behavior: "cancelled" };
 * ```
 *
 * @module
 */

import { isRecord } from "../_values.ts";

/** A `request_user_dialog` request of the CLI, read. */
export interface UserDialogRequest {
  /** Which dialog to render (an open set: answer an unknown kind `{ behavior: "cancelled" }`). */
  readonly dialogKind: string;
  /** The dialog's data; its shape depends on `dialogKind`. */
  readonly payload: Readonly<Record<string, unknown>>;
  /** The tool call the dialog belongs to, when it belongs to one (as `toolUseId` of permissions). */
  readonly toolUseID: string | undefined;
  /** The request as the CLI sent it. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/**
 * The user's answer: `completed` with the dialog kind's result, or
 * `cancelled` (the CLI then applies the dialog's default behaviour).
 */
export type UserDialogResult =
  | { readonly behavior: "completed"; readonly result: unknown }
  | { readonly behavior: "cancelled" };

/** Answers user dialogs (the `onUserDialog` start option). Sync or async. */
export type UserDialogHandler = (
  request: UserDialogRequest,
  context: {
    /** Aborted when the CLI withdraws the dialog or the session ends. */
    readonly signal: AbortSignal;
    /** The control request's id. */
    readonly requestId: string;
  },
) => UserDialogResult | Promise<UserDialogResult>;

/**
 * Reads the CLI's `request_user_dialog` request body.
 *
 * @param body The request body.
 * @returns The dialog request.
 */
export function userDialogFrom(body: Readonly<Record<string, unknown>>): UserDialogRequest {
  return {
    dialogKind: typeof body.dialog_kind === "string" ? body.dialog_kind : "",
    payload: isRecord(body.payload) ? body.payload : {},
    toolUseID: typeof body.tool_use_id === "string" ? body.tool_use_id : undefined,
    raw: body,
  };
}

/**
 * Checks a dialog handler's answer.
 *
 * @param value What the handler returned.
 * @returns The wire payload.
 * @throws {TypeError} When it is not an answer.
 */
export function userDialogPayload(value: unknown): Record<string, unknown> {
  if (isRecord(value) && value.behavior === "cancelled") return { behavior: "cancelled" };
  if (isRecord(value) && value.behavior === "completed" && "result" in value) {
    return { behavior: "completed", result: value.result };
  }
  throw new TypeError(
    'onUserDialog must return { behavior: "completed", result } or { behavior: "cancelled" }',
  );
}
