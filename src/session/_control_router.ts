// This module is browser compatible.
/*
 * The CLI's control requests to us: permissions, hooks, in-process MCP,
 * elicitation, and anything else through `onControlRequest`. Every request is
 * answered exactly once, at once when nobody handles it, and never when the
 * CLI withdraws it.
 */

import { type HookCallback, registerHooks } from "../hooks/hooks.ts";
import { answerMcpMessage } from "../mcp/sdk_mcp_wiring.ts";
import type { CanUseToolRequest, ControlRequestBody } from "../protocol/control.ts";
import { isRecord } from "../protocol/guards.ts";
import { InboundRequests } from "./_inbound.ts";
import { denyAll, PermissionBroker } from "./_permission_broker.ts";
import { elicitationFrom, elicitationPayload } from "./elicitation.ts";
import type { SessionEvent } from "./events.ts";
import type { DuplexSessionOptions } from "./session_options.ts";

type Handler = (requestId: string, request: ControlRequestBody) => void;

export interface ControlRouterContext {
  write(frame: Record<string, unknown>): Promise<void>;
  publish(event: SessionEvent): void;
}

export class ControlRouter {
  readonly permissions: PermissionBroker;
  /** The `hooks` field of `initialize`. */
  readonly hooks: Record<string, unknown>;
  readonly #handlers = new Map<string, Handler>();
  readonly #requests: InboundRequests;
  readonly #hookCallbacks: ReadonlyMap<string, HookCallback>;
  readonly #options: DuplexSessionOptions;
  readonly #context: ControlRouterContext;

  constructor(options: DuplexSessionOptions, context: ControlRouterContext) {
    this.#options = options;
    this.#context = context;
    this.permissions = new PermissionBroker({
      handler: options.onPermission ?? denyAll,
      reply: (requestId, payload) => this.#reply(requestId, { ok: true, payload }),
      publish: context.publish,
      timeoutMs: options.permissionTimeoutMs,
    });
    this.#requests = new InboundRequests((requestId, outcome) => this.#reply(requestId, outcome));
    const hooks = registerHooks(options.hooks ?? {});
    this.hooks = hooks.initialize;
    this.#hookCallbacks = hooks.callbacks;
    this.#handlers.set("can_use_tool", (id, request) => {
      this.permissions.handle(id, request as CanUseToolRequest);
    });
    this.#handlers.set("hook_callback", (id, request) => this.#hook(id, request));
    this.#handlers.set("mcp_message", (id, request) => this.#mcp(id, request));
    this.#handlers.set("elicitation", (id, request) => this.#elicitation(id, request));
  }

  handle(requestId: string, request: ControlRequestBody): void {
    const handler = this.#handlers.get(request.subtype);
    if (handler) handler(requestId, request);
    else this.#other(requestId, request);
  }

  /** Answers a request that cannot be read (no subtype) with an error: the CLI never waits on us. */
  refuse(requestId: string): void {
    this.#reply(requestId, {
      ok: false,
      error: "Malformed control request: expected request.subtype",
    }).catch(() => {});
  }

  /** The CLI withdrew one of its requests. */
  cancel(requestId: string): void {
    if (!this.permissions.cancel(requestId)) this.#requests.cancel(requestId);
  }

  /** Aborts every request in progress, without answering. */
  abortAll(reason: string): void {
    this.permissions.abortAll(reason);
    this.#requests.abortAll(reason);
  }

  #hook(requestId: string, request: ControlRequestBody): void {
    const id = typeof request.callback_id === "string" ? request.callback_id : "";
    const callback = this.#hookCallbacks.get(id);
    this.#requests.serve(requestId, async (signal) => {
      if (!callback) {
        throw new Error(`No hook is registered with callback id ${JSON.stringify(id)}`);
      }
      const input = isRecord(request.input) ? request.input : {};
      const toolUseId = typeof request.tool_use_id === "string" ? request.tool_use_id : undefined;
      // deno-lint-ignore no-explicit-any
      const output: unknown = await callback(input as any, { signal, toolUseId });
      if (output === undefined || output === null) return {};
      if (!isRecord(output)) {
        throw new TypeError(`Hook ${id} returned ${typeof output}, not an object`);
      }
      return output;
    });
  }

  #mcp(requestId: string, request: ControlRequestBody): void {
    const servers = this.#options.mcpServers ?? [];
    const message = {
      // deno-lint-ignore camelcase
      server_name: typeof request.server_name === "string" ? request.server_name : "",
      message: request.message,
    };
    this.#requests.serve(requestId, async (signal) => ({
      ...await answerMcpMessage(servers, message, signal),
    }));
  }

  #elicitation(requestId: string, request: ControlRequestBody): void {
    const handler = this.#options.onElicitation;
    this.#requests.serve(
      requestId,
      async (signal) =>
        handler
          ? elicitationPayload(await handler(elicitationFrom(request), { signal }))
          : { action: "decline" },
    );
  }

  #other(requestId: string, request: ControlRequestBody): void {
    const handler = this.#options.onControlRequest;
    const unsupported = `Unsupported control request subtype: ${request.subtype}`;
    if (!handler) {
      this.#context.write({
        type: "control_response",
        response: {
          subtype: "error",
          request_id: requestId,
          error: unsupported,
          error_code: "unsupported_request",
        },
      }).catch(() => {});
      return;
    }
    this.#requests.serve(requestId, async (signal) => {
      const reply = await handler(request.subtype, request, { signal });
      if (reply === undefined) throw new Error(unsupported);
      return reply;
    });
  }

  #reply(
    requestId: string,
    outcome: { ok: true; payload: Record<string, unknown> } | { ok: false; error: string },
  ): Promise<void> {
    return this.#context.write({
      type: "control_response",
      response: outcome.ok
        ? { subtype: "success", request_id: requestId, response: outcome.payload }
        : { subtype: "error", request_id: requestId, error: outcome.error },
    });
  }
}
