// This module is browser compatible.
/*
 * Permission logic for `can_use_tool` requests: the handler call, deferral,
 * decisions checked and turned into the CLI's payload, and the events. The
 * requests themselves are served by the inbound registry (settled once there).
 */

import { messageOf } from "../_values.ts";
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
import type { PermissionResolvedEvent, SessionEvent } from "./events.ts";
import type { DropSource, InboundEntry, InboundRegistry } from "./_inbound_registry.ts";
import type { SpanHandle } from "../telemetry/_telemetry.ts";
import type { SessionTelemetry } from "./_session_telemetry.ts";
import type { PermissionOutcome } from "./_stats.ts";

type Source = PermissionResolvedEvent["source"];

const SUBTYPE = "can_use_tool";

interface Permission {
  readonly request: PermissionRequest;
  deferred: boolean;
  /** The wait's span (`NO_SPAN` without telemetry). */
  readonly span: SpanHandle;
}

export interface PermissionBrokerOptions {
  readonly registry: InboundRegistry;
  readonly handler: PermissionHandler;
  readonly publish: (event: SessionEvent) => void;
  /** A checked duration, or undefined: requests wait for ever. */
  readonly timeoutMs: number | undefined;
  readonly telemetry: SessionTelemetry;
}

/** The message the default handler denies with. */
export const DEFAULT_DENY_MESSAGE =
  "Tool use was denied: this host set no permission handler (pass onPermission to DuplexSession.start)";

export function denyAll(): FinalPermissionDecision {
  return { behavior: "deny", message: DEFAULT_DENY_MESSAGE };
}

export class PermissionBroker {
  readonly #options: PermissionBrokerOptions;

  constructor(options: PermissionBrokerOptions) {
    this.#options = options;
  }

  /** The requests still waiting for a decision, oldest first. */
  pending(): PermissionRequest[] {
    return this.#options.registry.entries<Permission>(SUBTYPE).map((entry) => entry.data.request);
  }

  handle(requestId: string, body: CanUseToolRequest): void {
    const { registry, timeoutMs, publish, handler } = this.#options;
    const entry = registry.open<Permission>(requestId, {
      subtype: SUBTYPE,
      data: (signal) => ({
        request: permissionRequestFrom(requestId, body, signal),
        deferred: false,
        span: this.#options.telemetry.permissionStarted(requestId, body),
      }),
      timeoutMs,
      onTimeout: (entry) =>
        this.#settle(entry, {
          behavior: "deny",
          message: `No permission decision was made within ${timeoutMs} ms`,
        }, "timeout"),
      onDrop: (entry, source) => this.#dropped(entry, source),
    });
    if (!entry) return; // a repeated id: the first one stands
    publish({ type: "permission_request", request: entry.data.request });
    let outcome: unknown;
    try {
      outcome = handler(entry.data.request);
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
    const entry = this.#options.registry.get<Permission>(requestId, SUBTYPE);
    if (!entry) return false;
    this.#settle(entry, check.decision as FinalPermissionDecision, "respond");
    return true;
  }

  #handlerDecided(entry: InboundEntry<Permission>, value: unknown): void {
    if (!this.#pending(entry)) return; // answered meanwhile: the late decision is dropped
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
      entry.data.deferred = true;
      this.#options.telemetry.permissionDeferred(entry.data.span);
      return;
    }
    this.#settle(entry, check.decision, "handler");
  }

  #handlerFailed(entry: InboundEntry<Permission>, error: unknown): void {
    if (!this.#pending(entry)) return;
    const reason = messageOf(error);
    this.#diagnose(`Permission handler failed: ${reason}`);
    this.#settle(entry, {
      behavior: "deny",
      message: `Denied: the permission handler failed (${reason})`,
    }, "handler");
  }

  #settle(
    entry: InboundEntry<Permission>,
    decision: FinalPermissionDecision,
    source: Source,
  ): void {
    const { request } = entry.data;
    const { requestId, toolName } = request;
    // Answered by someone else (a person, the timeout): a handler still running can stop.
    const abortReason = source === "handler" ? undefined : new DuplexError(
      "aborted",
      `The permission request was answered (${source})`,
      { requestId },
    );
    const payload = decisionPayload(decision, request);
    if (!this.#options.registry.answer(requestId, { ok: true, payload }, abortReason)) return;
    this.#ended(entry.data, decision.behavior, source);
    this.#options.publish({
      type: "permission_resolved",
      requestId,
      toolName,
      behavior: decision.behavior,
      source,
    });
  }

  #dropped(entry: InboundEntry<Permission>, source: DropSource): void {
    const { requestId, toolName } = entry.data.request;
    this.#ended(entry.data, "cancelled", source);
    this.#options.publish({
      type: "permission_resolved",
      requestId,
      toolName,
      behavior: "cancelled",
      source,
    });
  }

  /* How the wait ended, to its span, the metrics and the stats. */
  #ended(permission: Permission, decision: PermissionOutcome, source: Source): void {
    this.#options.telemetry.permissionEnded(permission.span, decision, source, permission.deferred);
  }

  #pending(entry: InboundEntry<Permission>): boolean {
    return this.#options.registry.get(entry.requestId, SUBTYPE) === entry;
  }

  #diagnose(message: string): void {
    this.#options.publish({ type: "diagnostic", kind: "permission_handler_error", message });
  }
}
