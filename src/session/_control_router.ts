// This module is browser compatible.
/*
 * Routes the CLI's control requests to whoever answers them: permissions,
 * hooks, in-process MCP, elicitation, user dialogs (`onUserDialog`, else as
 * any other request), and anything else through `onControlRequest`. Every request is served by the one inbound registry:
 * answered exactly once, at once when nobody handles it, never when the CLI
 * withdraws it.
 */

import type { HookCallback, HookRegistry } from "../hooks/hooks.ts";
import type { SdkMcpServer } from "../mcp/mcp_server.ts";
import { answerMcpMessage } from "../mcp/sdk_mcp_wiring.ts";
import type { ControlRequestBody } from "../protocol/control.ts";
import { readCanUseToolRequest } from "../protocol/guards.ts";
import { userDialogFrom, userDialogPayload } from "../protocol/user_dialog.ts";
import { isRecord } from "../_values.ts";
import { InboundRegistry } from "./_inbound_registry.ts";
import { denyAll, PermissionBroker } from "./_permission_broker.ts";
import { elicitationFrom, elicitationPayload } from "./elicitation.ts";
import type { SessionEvent } from "./events.ts";
import type { DuplexSessionOptions } from "./session_options.ts";
import type { SessionTelemetry } from "./_session_telemetry.ts";

type Route = (requestId: string, request: ControlRequestBody) => void;

export interface ControlRouterContext {
  write(frame: Record<string, unknown>): Promise<void>;
  publish(event: SessionEvent): void;
  /** The hooks, checked and registered (`checkOptions`). */
  readonly hooks: HookRegistry;
  readonly telemetry: SessionTelemetry;
}

export class ControlRouter {
  readonly permissions: PermissionBroker;
  /** The `hooks` field of `initialize`. */
  readonly hooks: Record<string, unknown>;
  /** The in-process MCP servers that answer `mcp_message` (replaced by `setMcpServers`). */
  mcpServers: readonly SdkMcpServer[] = [];
  readonly #registry: InboundRegistry;
  readonly #routes: ReadonlyMap<string, Route>;
  readonly #hookCallbacks: ReadonlyMap<string, HookCallback>;
  readonly #options: DuplexSessionOptions;
  readonly #telemetry: SessionTelemetry;

  constructor(options: DuplexSessionOptions, context: ControlRouterContext) {
    this.#options = options;
    this.#telemetry = context.telemetry;
    this.#registry = new InboundRegistry(context.write);
    this.permissions = new PermissionBroker({
      registry: this.#registry,
      handler: options.onPermission ?? denyAll,
      publish: context.publish,
      timeoutMs: options.permissionTimeoutMs,
      telemetry: context.telemetry,
    });
    this.hooks = context.hooks.initialize;
    this.#hookCallbacks = context.hooks.callbacks;
    this.#routes = new Map<string, Route>([
      [
        "can_use_tool",
        (id, request) => this.permissions.handle(id, readCanUseToolRequest(request)),
      ],
      ["hook_callback", (id, request) => this.#hook(id, request)],
      ["mcp_message", (id, request) => this.#mcp(id, request)],
      ["elicitation", (id, request) => this.#elicitation(id, request)],
      ["request_user_dialog", (id, request) => this.#userDialog(id, request)],
    ]);
  }

  /** How many of the CLI's requests are being served. */
  get pendingCount(): number {
    return this.#registry.size;
  }

  handle(requestId: string, request: ControlRequestBody): void {
    const route = this.#routes.get(request.subtype);
    if (route) route(requestId, request);
    else this.#other(requestId, request);
  }

  /** Answers a request that cannot be read (no subtype) with an error: the CLI never waits on us. */
  refuse(requestId: string): void {
    this.#registry.reply(requestId, {
      ok: false,
      error: "Malformed control request: expected request.subtype",
    });
  }

  /** The CLI withdrew one of its requests. */
  cancel(requestId: string): void {
    this.#registry.cancel(requestId);
  }

  /** Drops every request in progress, without answering. */
  abortAll(reason: string): void {
    this.#registry.abortAll(reason);
  }

  #hook(requestId: string, request: ControlRequestBody): void {
    const id = typeof request.callback_id === "string" ? request.callback_id : "";
    const callback = this.#hookCallbacks.get(id);
    const handler = async (signal: AbortSignal): Promise<Record<string, unknown>> => {
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
    };
    this.#registry.serve(
      requestId,
      request.subtype,
      this.#telemetry.traceHook(request.input, id, handler),
    );
  }

  #mcp(requestId: string, request: ControlRequestBody): void {
    const servers = this.mcpServers;
    const message = {
      // deno-lint-ignore camelcase
      server_name: typeof request.server_name === "string" ? request.server_name : "",
      message: request.message,
    };
    const handler = async (signal: AbortSignal) => ({
      ...await answerMcpMessage(servers, message, signal),
    });
    this.#registry.serve(
      requestId,
      request.subtype,
      this.#telemetry.traceTool(message.server_name, request.message, handler),
    );
  }

  #elicitation(requestId: string, request: ControlRequestBody): void {
    const handler = this.#options.onElicitation;
    this.#registry.serve(
      requestId,
      request.subtype,
      async (signal) =>
        handler
          ? elicitationPayload(await handler(elicitationFrom(request), { signal }))
          : { action: "decline" },
    );
  }

  #userDialog(requestId: string, request: ControlRequestBody): void {
    const handler = this.#options.onUserDialog;
    if (!handler) {
      this.#other(requestId, request);
      return;
    }
    this.#registry.serve(
      requestId,
      request.subtype,
      async (signal) =>
        userDialogPayload(await handler(userDialogFrom(request), { signal, requestId })),
    );
  }

  #other(requestId: string, request: ControlRequestBody): void {
    const handler = this.#options.onControlRequest;
    const unsupported = `Unsupported control request subtype: ${request.subtype}`;
    if (!handler) {
      this.#registry.reply(requestId, {
        ok: false,
        error: unsupported,
        code: "unsupported_request",
      });
      return;
    }
    this.#registry.serve(requestId, request.subtype, async (signal) => {
      const reply = await handler(request.subtype, request, { signal });
      if (reply === undefined) throw new Error(unsupported);
      return reply;
    });
  }
}
