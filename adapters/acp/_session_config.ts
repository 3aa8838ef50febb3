/**
 * An ACP session's modes (the CLI's permission modes) and its config options
 * (`mode` and `model` selects, as `claude-agent-acp`'s `buildConfigOptions`),
 * and its slash commands as an `available_commands_update`.
 *
 * @module
 */

import type { AvailableCommand, SessionConfigOption, SessionModeState } from "./_acp.ts";
import type { SessionInfo } from "../../mod.ts";
import type { PermissionMode } from "../../src/protocol/control.ts";

const MODES: readonly { id: PermissionMode; name: string; description: string }[] = [
  {
    id: "default",
    name: "Default",
    description: "Standard behavior, prompts for dangerous operations",
  },
  { id: "acceptEdits", name: "Accept Edits", description: "Auto-accept file edit operations" },
  { id: "plan", name: "Plan Mode", description: "Planning mode, no actual tool execution" },
  {
    id: "dontAsk",
    name: "Don't Ask",
    description: "Don't prompt for permissions, deny if not pre-approved",
  },
  {
    id: "bypassPermissions",
    name: "Bypass Permissions",
    description: "Bypass all permission checks",
  },
];

/**
 * The modes a session offers.
 *
 * @param bypass Whether bypassPermissions is offered.
 * @returns The mode ids.
 */
export function modeIds(bypass: boolean): PermissionMode[] {
  return MODES.filter((mode) => bypass || mode.id !== "bypassPermissions").map((mode) => mode.id);
}

/**
 * The session's mode state.
 *
 * @param current The mode in force.
 * @param bypass Whether bypassPermissions is offered.
 * @returns The ACP mode state.
 */
export function modeState(current: string, bypass: boolean): SessionModeState {
  return {
    currentModeId: current,
    availableModes: MODES.filter((mode) => bypass || mode.id !== "bypassPermissions"),
  };
}

/**
 * The session's config options: its mode and its model.
 *
 * @param mode The mode in force.
 * @param model The model in force (a value of `info.models`, or an alias).
 * @param info What the CLI said about itself.
 * @param bypass Whether bypassPermissions is offered.
 * @returns The two selects.
 */
export function configOptions(
  mode: string,
  model: string,
  info: SessionInfo | undefined,
  bypass: boolean,
): SessionConfigOption[] {
  const models = info?.models ?? [];
  return [
    {
      id: "mode",
      name: "Mode",
      description: "Session permission mode",
      category: "mode",
      type: "select",
      currentValue: mode,
      options: modeState(mode, bypass).availableModes.map((m) => ({
        value: m.id,
        name: m.name,
        description: m.description ?? null,
      })),
    },
    {
      id: "model",
      name: "Model",
      description: "AI model to use",
      category: "model",
      type: "select",
      currentValue: model,
      options: (models.length > 0 ? models : [{ value: model, displayName: model }]).map((m) => ({
        value: m.value,
        name: m.displayName ?? m.value,
        description: typeof m.description === "string" ? m.description : null,
      })),
    },
  ];
}

/** Commands a client cannot run through ACP (they need the CLI's own terminal UI). */
const UNSUPPORTED = new Set([
  "cost",
  "keybindings-help",
  "login",
  "logout",
  "output-style:new",
  "release-notes",
  "todos",
]);

/**
 * The slash commands the CLI offers, as ACP commands (`mcp:server:cmd` for
 * MCP prompts, which a prompt's `/mcp:…` text calls).
 *
 * @param info What the CLI said about itself.
 * @returns The commands.
 */
export function availableCommands(info: SessionInfo | undefined): AvailableCommand[] {
  return (info?.commands ?? []).flatMap((command): AvailableCommand[] => {
    if (UNSUPPORTED.has(command.name)) return [];
    const hint = Array.isArray(command.argumentHint)
      ? command.argumentHint.join(" ")
      : command.argumentHint;
    const name = command.name.endsWith(" (MCP)")
      ? `mcp:${command.name.slice(0, -" (MCP)".length)}`
      : command.name;
    return [{
      name,
      description: command.description ?? "",
      input: typeof hint === "string" && hint !== "" ? { hint } : null,
    }];
  });
}
