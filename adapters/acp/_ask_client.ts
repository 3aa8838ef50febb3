/*
 * A permission request of the CLI asked of the editor: the tool call
 * described (`toolInfo`), `session/request_permission` sent with the
 * request's signal, the outcome read as the library's decision
 * (`_permission.ts`), and a mode the client chose on the way out of plan
 * mode applied and announced.
 */

import { type AgentContext, methods, type SessionUpdate } from "./_acp.ts";
import {
  deny,
  type DuplexSession,
  type PermissionDecision,
  type PermissionRequest,
} from "../../mod.ts";
import { messageOf } from "../../src/_values.ts";
import type { AcpSession } from "./_acp_session.ts";
import { permissionAnswer, permissionOptions } from "./_permission.ts";
import { toolInfo } from "./_tool_info.ts";

/** What asking needs of the agent. */
export interface AskContext {
  /** The ACP session the request belongs to, if it is still open. */
  readonly state: AcpSession | undefined;
  /** The connected client, if any. */
  readonly client: AgentContext | undefined;
  /** Whether `bypassPermissions` may be offered. */
  readonly bypass: boolean;
  /** The agent's log. */
  log(message: string): void;
  /** Sends a `session/update` of this session. */
  notify(update: SessionUpdate): Promise<void>;
}

/**
 * Asks the client, and answers the CLI: a request no client can answer, or
 * one whose round trip fails, is denied with the reason.
 *
 * @param context The agent's side.
 * @param session The CLI's session (a chosen mode is applied to it).
 * @param request The CLI's request.
 * @returns The decision.
 */
export async function askClient(
  context: AskContext,
  session: DuplexSession,
  request: PermissionRequest,
): Promise<PermissionDecision> {
  const { state, client } = context;
  if (!state || !client) {
    return deny("No ACP client is connected to answer the permission request");
  }
  const info = toolInfo(request.toolName, request.input, { cwd: state.cwd });
  const response = await client.request(methods.client.session.requestPermission, {
    sessionId: state.id,
    options: permissionOptions(request, context.bypass),
    toolCall: {
      toolCallId: request.toolUseId ?? request.requestId,
      rawInput: request.input,
      title: info.title,
      kind: info.kind,
      content: info.content,
      locations: info.locations,
    },
  }, { cancellationSignal: request.signal }).catch((error) => {
    context.log(`The permission request failed: ${messageOf(error)}`);
    return undefined;
  });
  if (response === undefined) return deny("The client did not answer the permission request");
  const answer = permissionAnswer(request, response);
  if (answer.mode !== undefined) {
    state.mode = answer.mode;
    state.markApplied(session);
    await context.notify({ sessionUpdate: "current_mode_update", currentModeId: answer.mode });
  }
  return answer.decision;
}
