// This module is browser compatible.
/* Inbound `can_use_tool` requests: handler calls, deferrals, CLI cancels; each settles once. */

import { DuplexError } from "../errors.ts";
import {
  checkDecision,
  decisionPayload,
  type FinalPermissionDecision,
  type PermissionHandler,
  type PermissionRequest,
  permissionRequestFrom,
} from "../permissions/permission.ts";
import type { CanUseToolRequest } from "../protocol/control.ts";
import type { DiagnosticEvent, PermissionResolvedEvent, SessionEvent } from "./events.ts";

type Source = PermissionResolvedEvent["source"];

interface Entry {
  request: PermissionRequest;
  controller: AbortController;
  deferred: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface PermissionBrokerOptions {
  handler: PermissionHandler;
  /** Writes the success response for `requestId`. */
  reply(requestId: string, payload: Record<string, unknown>): Promise<void>;
  publish(event: SessionEvent): void;
  timeoutMs: number | undefined;
}

/** The message the default handler denies with. */
export const DEFAULT_DENY_MESSAGE =
  "Tool use was denied: this host set no permission handler (pass onPermission to DuplexSession.start)";

export function denyAll(): FinalPermissionDecision {
  return { behavior: "deny", message: DEFAULT_DENY_MESSAGE };
}

export class PermissionBroker {
  readonly #entries = new Map<string, Entry>();
  readonly #options: PermissionBrokerOptions;

  constructor(options: PermissionBrokerOptions) {
    this.#options = options;
  }

  /** The requests still waiting for a decision, oldest first. */
  pending(): PermissionRequest[] {
    return [...this.#entries.values()].map((entry) => entry.request);
  }

  handle(requestId: string, body: CanUseToolRequest): void {
    if (this.#entries.has(requestId)) return; // a repeated id: the first one stands
    const controller = new AbortController();
    const request = permissionRequestFrom(requestId, body, controller.signal);
    const entry: Entry = { request, controller, deferred: false, timer: undefined };
    this.#entries.set(requestId, entry);
    const timeoutMs = this.#options.timeoutMs;
    if (timeoutMs !== undefined) {
      entry.timer = setTimeout(() => {
        this.#settle(entry, {
          behavior: "deny",
          message: `No permission decision was made within ${timeoutMs} ms`,
        }, "timeout");
      }, timeoutMs);
    }
    this.#options.publish({ type: "permission_request", request });
    let outcome: unknown;
    try {
      outcome = this.#options.handler(request);
    } catch (error) {
      this.#handlerFailed(entry, error);
      return;
    }
    Promise.resolve(outcome).then(
      (decision) => this.#handlerDecided(entry, decision),
      (error) => this.#handlerFailed(entry, error),
    );
  }

  /** Answers a request. False when no request has that id (answered, withdrawn, or unknown). */
  respond(requestId: string, decision: unknown): boolean {
    const check = checkDecision(decision);
    if (check.ok && check.decision.behavior === "defer") {
      throw new DuplexError(
        "cannot_defer_again",
        `Cannot defer permission request ${requestId} again: answer it with allow or deny`,
        { requestId },
      );
    }
    if (!check.ok) {
      throw new TypeError(`Cannot answer permission request ${requestId}: ${check.reason}`);
    }
    const entry = this.#entries.get(requestId);
    if (!entry) return false;
    this.#settle(entry, check.decision as FinalPermissionDecision, "respond");
    return true;
  }

  /** The CLI withdrew the request: abort its signal and never answer it. */
  cancel(requestId: string): boolean {
    const entry = this.#entries.get(requestId);
    if (!entry) return false;
    this.#drop(entry, "cli", "The CLI withdrew the permission request");
    return true;
  }

  /** The session ends: abort every pending request without answering. */
  abortAll(reason: string): void {
    for (const entry of [...this.#entries.values()]) this.#drop(entry, "session", reason);
  }

  #handlerDecided(entry: Entry, value: unknown): void {
    if (this.#entries.get(entry.request.requestId) !== entry) return; // settled meanwhile
    const check = checkDecision(value);
    if (!check.ok) {
      this.#diagnose(`Permission handler returned an invalid decision: ${check.reason}`);
      this.#settle(entry, {
        behavior: "deny",
        message: `Denied: the permission handler returned an invalid decision (${check.reason})`,
      }, "handler");
      return;
    }
    if (check.decision.behavior === "defer") {
      entry.deferred = true;
      return;
    }
    this.#settle(entry, check.decision, "handler");
  }

  #handlerFailed(entry: Entry, error: unknown): void {
    if (this.#entries.get(entry.request.requestId) !== entry) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.#diagnose(`Permission handler failed: ${reason}`);
    this.#settle(entry, {
      behavior: "deny",
      message: `Denied: the permission handler failed (${reason})`,
    }, "handler");
  }

  #settle(entry: Entry, decision: FinalPermissionDecision, source: Source): void {
    const { requestId, toolName } = entry.request;
    if (this.#entries.get(requestId) !== entry) return;
    this.#entries.delete(requestId);
    clearTimeout(entry.timer);
    if (source !== "handler") {
      // Answered by someone else (a person, the timeout): a handler still running can stop.
      entry.controller.abort(
        new DuplexError("aborted", `The permission request was answered (${source})`, {
          requestId,
        }),
      );
    }
    this.#options.reply(requestId, decisionPayload(decision, entry.request)).catch(() => {
      /* the transport is gone; its end is reported by the session */
    });
    this.#options.publish({
      type: "permission_resolved",
      requestId,
      toolName,
      behavior: decision.behavior,
      source,
    });
  }

  #drop(entry: Entry, source: Source, reason: string): void {
    const { requestId, toolName } = entry.request;
    this.#entries.delete(requestId);
    clearTimeout(entry.timer);
    entry.controller.abort(new DuplexError("aborted", reason, { requestId }));
    this.#options.publish({
      type: "permission_resolved",
      requestId,
      toolName,
      behavior: "cancelled",
      source,
    });
  }

  #diagnose(message: string): void {
    const event: DiagnosticEvent = {
      type: "diagnostic",
      kind: "permission_handler_error",
      message,
    };
    this.#options.publish(event);
  }
}
