// This module is browser compatible.
/**
 * Permission requests the CLI makes before running a tool, and the decisions
 * a host gives.
 *
 * @module
 */

import type { CanUseToolRequest, PermissionUpdate } from "../protocol/control.ts";
import { describe, isRecord } from "../_values.ts";

/** The MCP server behind an `mcp__*` tool. Trust `source` (`"sdk"`: yours), never the name. */
export interface PermissionMcpServer {
  /** The server's configured name: untrusted text unless `source` is `"sdk"`; escape it. */
  readonly name: string;
  /** Where its definition came from: `"sdk"`, `"plugin"`, `"user"`, `"project"`, `"dynamic"`, …. */
  readonly source: string;
}

/** The user-configured ask rule (`permissions.ask`) that forced a prompt. */
export interface MatchedAskRule {
  /** Where the rule is configured, for example `"userSettings"` (untrusted text). */
  readonly source: string;
  /** The tool the rule names, for example `"Bash"`. */
  readonly toolName: string;
  /** What the rule matches (`"rm:*"`); absent for a rule on the whole tool. */
  readonly ruleContent?: string;
}

/**
 * A tool the CLI wants to run, waiting for the host's decision: what the
 * official SDK's `canUseTool` receives, under the same names. Every text
 * field is the CLI's or a configuration's words: escape it before display.
 * A field the CLI did not send, or sent with the wrong type, is `undefined`
 * (it stays in `raw`).
 */
export interface PermissionRequest {
  /** The control request id; pass it to `respondToPermission`. */
  readonly requestId: string;
  /** The tool's name, for example `"Bash"` or `"mcp__server__tool"`. */
  readonly toolName: string;
  /** The whole prompt sentence (`"Claude wants to read foo.txt"`): show it instead of your own. */
  readonly title: string | undefined;
  /** A short name of the tool's action (`"Read file"`), for a button label. */
  readonly displayName: string | undefined;
  /** The tool's input. */
  readonly input: Readonly<Record<string, unknown>>;
  /** The `tool_use` block id, when the CLI sent one. */
  readonly toolUseId: string | undefined;
  /** A subtitle: what the call will do, when the CLI sent one. */
  readonly description: string | undefined;
  /** Changes the CLI suggests for "always allow" answers (pass back in `updatedPermissions`). */
  readonly suggestions: readonly PermissionUpdate[];
  /** The path outside the allowed directories that caused the ask, if any. */
  readonly blockedPath: string | undefined;
  /** Why the CLI asks, when it said (may carry ANSI escapes). */
  readonly decisionReason: string | undefined;
  /** The kind of reason: `"rule"`, `"safetyCheck"`, `"workingDir"`, `"hook"`, `"classifier"`, …. */
  readonly decisionReasonType: string | undefined;
  /** A closed-set code a host can act on (`"org_ask_ceiling"`, …), beside the type. */
  readonly decisionReasonCode: string | undefined;
  /** With a safety check: `false` when one needs a person, `true` when none does. */
  readonly classifierApprovable: boolean | undefined;
  /** With a `"rule"` reason or an MCP tool: `true` when nothing but the default prompt asked. */
  readonly serverPolicyAskOnly: boolean | undefined;
  /** Whether the plan-mode floor alone asked. */
  readonly planFloorAskOnly: boolean | undefined;
  /** Why an `…AskOnly` field is `false`. */
  readonly askOnlyFalseCause: string | undefined;
  /** For `mcp__*` tools: the server and where it came from; key trust on `source`. */
  readonly mcpServer: PermissionMcpServer | undefined;
  /** Not approvable by one stray keystroke: open on Deny, offer no one-key approve. */
  readonly defaultToNo: boolean | undefined;
  /** Offer no persistent "always allow" (its rule would grant more than this call). */
  readonly suppressAlwaysAllowRule: boolean | undefined;
  /** `true` when only managed (administrator) rules decide this call (as the SDK: never `false`). */
  readonly managedRulesOnly: true | undefined;
  /** The plugin whose run made the call (untrusted text). */
  readonly plugin: string | undefined;
  /** No one-tap Approve/Deny: the person has to open the session to answer. */
  readonly requiresUserInteraction: boolean | undefined;
  /** Which of the session service's own prompts this is (a claim, not proof). */
  readonly serverPrompt: string | undefined;
  /** A folder on one of the person's computers, beside `serverPrompt` (untrusted text). */
  readonly computerFolder: { readonly path: string; readonly computerName: string } | undefined;
  /** The `permissions.ask` rule that forced the prompt: the user wants a person to decide. */
  readonly matchedAskRule: MatchedAskRule | undefined;
  /** The sub-agent asking, if not the main loop. */
  readonly agentId: string | undefined;
  /** Aborted when the CLI withdraws the request or the session ends: stop asking then. */
  readonly signal: AbortSignal;
  /** When the request arrived (milliseconds since the epoch). */
  readonly receivedAt: number;
  /** The request as the CLI sent it. */
  readonly raw: Readonly<CanUseToolRequest>;
}

/**
 * What a decision was, for the CLI's telemetry (`tool_decision` events):
 * `"user_temporary"` allow once, `"user_permanent"` always allow,
 * `"user_reject"` deny. Unset, the CLI infers temporary for an allow and
 * reject for a deny.
 */
export type PermissionDecisionClassification = "user_temporary" | "user_permanent" | "user_reject";

/** Lets the tool run, optionally with a rewritten input and new permission rules. */
export interface AllowDecision {
  /** Always `"allow"`. */
  behavior: "allow";
  /** The input the tool runs with. Defaults to the original input. */
  updatedInput?: Record<string, unknown>;
  /** Permission changes to apply (typically from `request.suggestions`). */
  updatedPermissions?: PermissionUpdate[];
  /** What the person chose: `"user_temporary"` (once) or `"user_permanent"` (always). */
  decisionClassification?: PermissionDecisionClassification;
}

/** Refuses the tool; the model sees `message`. */
export interface DenyDecision {
  /** Always `"deny"`. */
  behavior: "deny";
  /** What the model is told. */
  message: string;
  /** Also interrupt the turn. */
  interrupt?: boolean;
  /** What the person chose: `"user_reject"` when a person said no. */
  decisionClassification?: PermissionDecisionClassification;
}

/** Answers later, through `session.respondToPermission(requestId, decision)`. */
export interface DeferDecision {
  /** Always `"defer"`. */
  behavior: "defer";
}

/** What a permission handler decides. */
export type PermissionDecision = AllowDecision | DenyDecision | DeferDecision;

/** A final decision: what `respondToPermission` takes. */
export type FinalPermissionDecision = AllowDecision | DenyDecision;

/** Decides on a permission request, now or (with `defer`) later. */
export type PermissionHandler = (
  request: PermissionRequest,
) => PermissionDecision | Promise<PermissionDecision>;

/** Options of {@linkcode allow}. */
export interface AllowOptions {
  /** Permission changes to apply (typically `request.suggestions`, for "always allow"). */
  readonly updatedPermissions?: PermissionUpdate[];
  /** What the person chose, for the CLI's telemetry. */
  readonly decisionClassification?: PermissionDecisionClassification;
}

/**
 * Allows a tool.
 *
 * @param updatedInput The input to run the tool with, if rewritten.
 * @param options New permission rules, and how the person decided.
 * @returns An allow decision.
 *
 * @example Allow reads, deny the rest
 * ```ts
 * import { allow, deny, type PermissionHandler } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const handler: PermissionHandler = (req) =>
 *   req.toolName === "Read" ? allow() : deny(`${req.toolName} is not allowed here`);
 * assert.equal(typeof handler, "function");
 * assert.deepEqual(allow({ command: "ls" }), { behavior: "allow", updatedInput: { command: "ls" } });
 * ```
 *
 * @example "Always allow": the CLI's suggestions, classified as permanent
 * ```ts
 * import { allow, type PermissionHandler } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const always: PermissionHandler = (req) =>
 *   req.suppressAlwaysAllowRule
 *     ? allow(undefined, { decisionClassification: "user_temporary" })
 *     : allow(undefined, {
 *       updatedPermissions: [...req.suggestions],
 *       decisionClassification: "user_permanent",
 *     });
 * assert.equal(typeof always, "function");
 * ```
 */
export function allow(
  updatedInput?: Record<string, unknown>,
  options: AllowOptions = {},
): AllowDecision {
  const decision: AllowDecision = { behavior: "allow" };
  if (updatedInput !== undefined) decision.updatedInput = updatedInput;
  if (options.updatedPermissions) decision.updatedPermissions = options.updatedPermissions;
  if (options.decisionClassification) {
    decision.decisionClassification = options.decisionClassification;
  }
  return decision;
}

/**
 * Denies a tool.
 *
 * @param message What the model is told.
 * @param options `interrupt: true` also ends the turn; `decisionClassification`
 *   `"user_reject"` says a person refused.
 * @returns A deny decision.
 */
export function deny(
  message: string,
  options: { interrupt?: boolean; decisionClassification?: PermissionDecisionClassification } = {},
): DenyDecision {
  const decision: DenyDecision = { behavior: "deny", message };
  if (options.interrupt) decision.interrupt = true;
  if (options.decisionClassification) {
    decision.decisionClassification = options.decisionClassification;
  }
  return decision;
}

/**
 * Defers a decision, to be given later with `respondToPermission`.
 *
 * @returns A defer decision.
 */
export function defer(): DeferDecision {
  return { behavior: "defer" };
}

/** The outcome of checking a value that should be a decision. */
export type DecisionCheck =
  | { ok: true; decision: PermissionDecision }
  | { ok: false; reason: string };

/**
 * Checks that a value returned by a handler is a valid decision.
 *
 * @param value What the handler returned.
 * @returns The decision, or why it is not one.
 */
export function checkDecision(value: unknown): DecisionCheck {
  if (!isRecord(value)) {
    return { ok: false, reason: `expected a decision object, got ${describe(value)}` };
  }
  if (value.behavior === "defer") return { ok: true, decision: { behavior: "defer" } };
  if (value.behavior !== "allow" && value.behavior !== "deny") {
    return {
      ok: false,
      reason: `behavior must be "allow", "deny" or "defer", got ${describe(value.behavior)}`,
    };
  }
  const classification = value.decisionClassification;
  if (classification !== undefined && !CLASSIFICATIONS.includes(classification as never)) {
    return {
      ok: false,
      reason: `${value.behavior}.decisionClassification must be "user_temporary", ` +
        `"user_permanent" or "user_reject", got ${describe(classification)}`,
    };
  }
  const classified = classification === undefined
    ? {}
    : { decisionClassification: classification as PermissionDecisionClassification };
  return value.behavior === "deny" ? checkDeny(value, classified) : checkAllow(value, classified);
}

const CLASSIFICATIONS: readonly PermissionDecisionClassification[] = [
  "user_temporary",
  "user_permanent",
  "user_reject",
];

type Classified = { decisionClassification?: PermissionDecisionClassification };

function checkDeny(value: Record<string, unknown>, classified: Classified): DecisionCheck {
  if (value.message !== undefined && typeof value.message !== "string") {
    return { ok: false, reason: `deny.message must be a string, got ${describe(value.message)}` };
  }
  if (value.interrupt !== undefined && typeof value.interrupt !== "boolean") {
    return { ok: false, reason: `deny.interrupt must be a boolean` };
  }
  const message = value.message || "Denied by the host";
  return {
    ok: true,
    decision: deny(message, { interrupt: value.interrupt === true, ...classified }),
  };
}

function checkAllow(value: Record<string, unknown>, classified: Classified): DecisionCheck {
  const decision: AllowDecision = { behavior: "allow", ...classified };
  if (value.updatedInput !== undefined) {
    if (!isRecord(value.updatedInput)) {
      return { ok: false, reason: `allow.updatedInput must be an object` };
    }
    if (!encodable(value.updatedInput)) {
      return { ok: false, reason: `allow.updatedInput cannot be encoded as JSON` };
    }
    decision.updatedInput = value.updatedInput;
  }
  if (value.updatedPermissions !== undefined) {
    if (!Array.isArray(value.updatedPermissions) || !value.updatedPermissions.every(isRecord)) {
      return { ok: false, reason: `allow.updatedPermissions must be an array of objects` };
    }
    if (!encodable(value.updatedPermissions)) {
      return { ok: false, reason: `allow.updatedPermissions cannot be encoded as JSON` };
    }
    decision.updatedPermissions = value.updatedPermissions as PermissionUpdate[];
  }
  return { ok: true, decision };
}

/**
 * The wire payload of a final decision, as the CLI expects it (and as the
 * official SDK writes it): an allow always carries `updatedInput` (the
 * original input unless rewritten); `decisionClassification` and `toolUseID`
 * go under those names.
 *
 * @param decision The final decision.
 * @param request The request it answers.
 * @returns The `response` object of the success control response.
 */
export function decisionPayload(
  decision: FinalPermissionDecision,
  request: Pick<PermissionRequest, "input" | "toolUseId">,
): Record<string, unknown> {
  const payload: Record<string, unknown> = decision.behavior === "allow"
    ? {
      behavior: "allow",
      updatedInput: decision.updatedInput ?? request.input,
      ...(decision.updatedPermissions ? { updatedPermissions: decision.updatedPermissions } : {}),
    }
    : {
      behavior: "deny",
      message: decision.message,
      ...(decision.interrupt ? { interrupt: true } : {}),
    };
  if (decision.decisionClassification !== undefined) {
    payload.decisionClassification = decision.decisionClassification;
  }
  if (request.toolUseId !== undefined) payload.toolUseID = request.toolUseId;
  return payload;
}

/**
 * Builds the {@linkcode PermissionRequest} a handler sees from the CLI's request.
 *
 * @param requestId The control request id.
 * @param body The `can_use_tool` request body.
 * @param signal The request's abort signal.
 * @returns The permission request.
 */
export function permissionRequestFrom(
  requestId: string,
  body: CanUseToolRequest,
  signal: AbortSignal,
): PermissionRequest {
  return {
    requestId,
    toolName: typeof body.tool_name === "string" ? body.tool_name : "",
    title: str(body.title),
    displayName: str(body.display_name),
    input: isRecord(body.input) ? body.input : {},
    toolUseId: str(body.tool_use_id),
    description: str(body.description),
    suggestions: Array.isArray(body.permission_suggestions)
      ? body.permission_suggestions.filter(isRecord) as PermissionUpdate[]
      : [],
    blockedPath: str(body.blocked_path),
    decisionReason: str(body.decision_reason),
    decisionReasonType: str(body.decision_reason_type),
    decisionReasonCode: str(body.decision_reason_code),
    classifierApprovable: bool(body.classifier_approvable),
    serverPolicyAskOnly: bool(body.server_policy_ask_only),
    planFloorAskOnly: bool(body.plan_floor_ask_only),
    askOnlyFalseCause: str(body.ask_only_false_cause),
    mcpServer: mcpServerOf(body.mcp_server),
    defaultToNo: bool(body.default_to_no),
    suppressAlwaysAllowRule: bool(body.suppress_always_allow_rule),
    managedRulesOnly: body.managed_rules_only === true ? true : undefined,
    plugin: str(body.plugin),
    requiresUserInteraction: bool(body.requires_user_interaction),
    serverPrompt: str(body.server_prompt),
    computerFolder: computerFolderOf(body.computer_folder),
    matchedAskRule: matchedAskRuleOf(body.matched_ask_rule),
    agentId: str(body.agent_id),
    signal,
    receivedAt: Date.now(),
    raw: body,
  };
}

function mcpServerOf(value: unknown): PermissionMcpServer | undefined {
  if (!isRecord(value) || typeof value.name !== "string" || typeof value.source !== "string") {
    return undefined;
  }
  return { name: value.name, source: value.source };
}

function computerFolderOf(value: unknown): PermissionRequest["computerFolder"] {
  if (!isRecord(value) || typeof value.path !== "string") return undefined;
  if (typeof value.computer_name !== "string") return undefined;
  return { path: value.path, computerName: value.computer_name };
}

function matchedAskRuleOf(value: unknown): MatchedAskRule | undefined {
  if (!isRecord(value) || typeof value.source !== "string") return undefined;
  if (typeof value.tool_name !== "string") return undefined;
  const content = value.rule_content;
  if (content !== undefined && typeof content !== "string") return undefined;
  return {
    source: value.source,
    toolName: value.tool_name,
    ...(content !== undefined && { ruleContent: content }),
  };
}

function bool(value: unknown): boolean | undefined {
  return typeof value === "boolean" ? value : undefined;
}

function encodable(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
