/**
 * The `claude` command line for a duplex session, built from typed options
 * (`cli_options.ts`), with the private files and the variables some options
 * need.
 *
 * Pure: no `Deno.*`, no I/O. Every value is checked before anything is
 * spawned; a value of the right type that the CLI would refuse (an unknown
 * permission mode, a negative turn limit) throws a `DuplexError` of kind
 * `invalid_argument` naming the allowed values, a value of the wrong type
 * throws a `TypeError`.
 *
 * @module
 */

import {
  either,
  flag,
  invalid,
  json,
  list,
  oneOf,
  positiveInteger,
  positiveNumber,
  record,
  text,
  texts,
  uuid,
  wrongType,
} from "./_arg_checks.ts";
import {
  extraArgs,
  jsonArg,
  outputSchema,
  pluginArg,
  settingsArg,
  skillNames,
  thinkingArgs,
  toolConfigEnv,
  toolsArg,
} from "./_option_args.ts";
import { type CliOptions, EFFORTS, PERMISSION_MODES, SETTING_SOURCES } from "./cli_options.ts";

export * from "./cli_options.ts";

/** What a launch of the CLI needs: its arguments, the private files they name, its variables. */
export interface CliLaunch {
  /** The arguments (the program name not included). */
  readonly args: string[];
  /**
   * The files to write into the private folder before the spawn, by file
   * name: the settings, agents and MCP configs given as objects or JSON text
   * (the arguments name them, so that their secrets stay off the command line).
   */
  readonly files: Readonly<Record<string, string>>;
  /** Variables the options set for the CLI (file checkpointing, tool configuration). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Fields the CLI reads only from the session's `initialize` request
   * (`skills`): the transport hands them to the session.
   */
  readonly initialize: Readonly<Record<string, unknown>>;
  /**
   * The permission mode the arguments ask for: `permissionMode`, else
   * `"default"` (the arguments always name one), or the last one `extraArgs`
   * name. The session checks that the CLI reports it. Unset when `extraArgs`
   * name one that cannot be read.
   */
  readonly permissionMode?: string;
}

/** The folder name `buildArgs` puts in the arguments when none is given. */
const UNNAMED_DIR = "<private dir>";

/** The flags every duplex session needs, in the order the official SDK sends them. */
const BASE_ARGS: readonly string[] = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
];

/**
 * Builds the `claude` arguments for a duplex session (the program name not
 * included): {@linkcode planLaunch}`(options, privateDir).args`.
 *
 * Always `--output-format stream-json --verbose --input-format stream-json`
 * and, unless `permissionPromptToolName` names a tool (or the deprecated
 * `permissionPromptTool: false` is given), `--permission-prompt-tool=stdio`;
 * always `--permission-mode` (`default` unless `permissionMode` says
 * otherwise): what runs without asking never depends on the CLI's own
 * default, which differs between versions (2.1.300's is `auto`).
 * Valued flags use the one-item `--flag=value` form, which the CLI reads the
 * same way as two items and which stays unambiguous when a value starts with
 * `-`. `extraArgs` come last.
 *
 * @param options The CLI options.
 * @param privateDir The folder the private files go to (see
 * {@linkcode CliLaunch.files}); without it the arguments name `<private dir>`.
 * @returns The argument list.
 * @throws {DuplexError} `invalid_argument` for a value the CLI would refuse.
 * @throws {TypeError} For a value of the wrong type.
 *
 * @example Arguments for a session
 * ```ts
 * import { buildArgs } from "@duplex/claude/subprocess";
 * import assert from "node:assert/strict";
 *
 * const args = buildArgs({ model: "sonnet", maxTurns: 3, settingSources: [] });
 * assert.deepEqual(args, [
 *   "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
 *   "--permission-prompt-tool=stdio", "--permission-mode=default",
 *   "--model=sonnet", "--max-turns=3", "--setting-sources=",
 * ]);
 * ```
 */
export function buildArgs(options: CliOptions = {}, privateDir?: string): string[] {
  return planLaunch(options, privateDir).args;
}

/**
 * Checks the options and plans a launch of the CLI: the arguments, the
 * private files they name (write them into `privateDir`, readable by this
 * user only, before the spawn), and the variables the options set.
 *
 * @param options The CLI options.
 * @param privateDir The folder the private files will be in.
 * @returns The plan.
 * @throws {DuplexError} `invalid_argument` for a value the CLI would refuse.
 * @throws {TypeError} For a value of the wrong type.
 *
 * @example Settings go to a private file, not on the command line
 * ```ts
 * import { planLaunch } from "@duplex/claude/subprocess";
 * import assert from "node:assert/strict";
 *
 * const plan = planLaunch({ settings: { env: { TOKEN: "s3cret" } } }, "/tmp/d");
 * assert.equal(plan.args.at(-1), "--settings=/tmp/d/settings.json");
 * assert.equal(plan.files["settings.json"], '{"env":{"TOKEN":"s3cret"}}');
 * assert.ok(!plan.args.join(" ").includes("s3cret"));
 * ```
 */
export function planLaunch(options: CliOptions = {}, privateDir?: string): CliLaunch {
  return plan(options, privateDir).launch;
}

/**
 * A launch planned once, when the factory is made (`subprocess()`): its
 * arguments name `<private dir>`, and each spawn names the folder it wrote
 * the private files into with {@linkcode LaunchPlan.argsIn}.
 */
export interface LaunchPlan extends CliLaunch {
  /**
   * The arguments, the private files in `dir`: the plan's own when it has none.
   *
   * @param dir The folder the spawn wrote {@linkcode CliLaunch.files} into.
   */
  argsIn(dir: string): readonly string[];
}

/**
 * Checks the options and plans the launch once, for every spawn of a factory.
 *
 * @param options The CLI options.
 * @returns The plan.
 * @throws {DuplexError} `invalid_argument` for a value the CLI would refuse.
 * @throws {TypeError} For a value of the wrong type.
 */
export function launchPlan(options: CliOptions): LaunchPlan {
  const { launch, named } = plan(options, undefined);
  const { args } = launch;
  return {
    ...launch,
    argsIn(dir: string): readonly string[] {
      if (named.length === 0) return args;
      const folder = text("privateDir", dir);
      const renamed = [...args];
      for (const { index, path, name } of named) {
        const arg = args[index] as string;
        renamed[index] = `${arg.slice(0, arg.length - path.length)}${folder}/${name}`;
      }
      return renamed;
    },
  };
}

/** An argument that ends with the path of a private file. */
interface NamedFile {
  readonly index: number;
  readonly path: string;
  readonly name: string;
}

function plan(
  options: CliOptions,
  privateDir: string | undefined,
): { launch: CliLaunch; named: readonly NamedFile[] } {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`Cannot build the claude arguments: options must be an object`);
  }
  const o = options;
  const dir = privateDir === undefined ? UNNAMED_DIR : text("privateDir", privateDir);
  const args = [...BASE_ARGS];
  const files: Record<string, string> = {};
  const env: Record<string, string> = {};
  const initialize: Record<string, unknown> = {};
  const named: NamedFile[] = [];
  /* A JSON value carried in a private file, named at the end of the next argument pushed
   * (every caller pushes `--flag=<path>` right after, nothing in between). */
  function viaFile(name: string, contents: string): string {
    files[name] = contents;
    const path = `${dir}/${name}`;
    named.push({ index: args.length, path, name });
    return path;
  }

  const promptTool = promptToolArg(o);
  if (promptTool !== undefined) args.push(`--permission-prompt-tool=${promptTool}`);
  // Always named: what runs unasked must never be the CLI's default (2.1.300's was "auto").
  const bypass = flag("allowDangerouslySkipPermissions", o.allowDangerouslySkipPermissions);
  const mode = o.permissionMode === undefined
    ? "default"
    : oneOf("permissionMode", o.permissionMode, PERMISSION_MODES);
  if (mode === "bypassPermissions" && !bypass) {
    throw invalid(
      `permissionMode "bypassPermissions" skips every permission check; ` +
        `also pass allowDangerouslySkipPermissions: true to mean it`,
    );
  }
  args.push(`--permission-mode=${mode}`);
  if (o.permissionPrompts !== undefined) {
    args.push(
      `--permission-prompts=${oneOf("permissionPrompts", o.permissionPrompts, ["host", "none"])}`,
    );
  }
  if (o.model !== undefined) args.push(`--model=${text("model", o.model)}`);
  if (o.fallbackModel !== undefined) {
    const fallback = text("fallbackModel", o.fallbackModel);
    if (fallback === o.model) throw invalid("fallbackModel must differ from model", fallback);
    args.push(`--fallback-model=${fallback}`);
  }
  if (bypass) args.push("--allow-dangerously-skip-permissions");
  if (o.agent !== undefined) args.push(`--agent=${text("agent", o.agent)}`);
  if (o.effort !== undefined) args.push(`--effort=${oneOf("effort", o.effort, EFFORTS)}`);
  if (o.thinking !== undefined) args.push(...thinkingArgs(o.thinking));
  if (o.maxTurns !== undefined) args.push(`--max-turns=${positiveInteger("maxTurns", o.maxTurns)}`);
  if (o.maxBudgetUsd !== undefined) {
    args.push(`--max-budget-usd=${positiveNumber("maxBudgetUsd", o.maxBudgetUsd)}`);
  }
  if (o.taskBudget !== undefined) {
    const total = record("taskBudget", o.taskBudget).total;
    args.push(`--task-budget=${positiveInteger("taskBudget.total", total)}`);
  }
  const allowed = o.allowedTools === undefined ? [] : texts("allowedTools", o.allowedTools);
  if (o.skills !== undefined) {
    const skills = skillNames(o.skills);
    if (skills !== "all") initialize.skills = skills;
    const rules = skills === "all" ? ["Skill"] : skills.map((name) => `Skill(${name})`);
    for (const rule of rules) if (!allowed.includes(rule)) allowed.push(rule);
  }
  if (allowed.length > 0) args.push(`--allowedTools=${allowed.join(",")}`);
  if (o.disallowedTools !== undefined) {
    const names = texts("disallowedTools", o.disallowedTools);
    if (names.length > 0) args.push(`--disallowedTools=${names.join(",")}`);
  }
  if (o.tools !== undefined) args.push(toolsArg(o.tools));
  if (o.mcpConfig !== undefined) {
    args.push(`--mcp-config=${jsonArg("mcpConfig", o.mcpConfig, "mcp.json", viaFile)}`);
  }
  if (flag("strictMcpConfig", o.strictMcpConfig)) args.push("--strict-mcp-config");
  const dirs = either(["additionalDirectories", "addDirs"], o.additionalDirectories, o.addDirs);
  if (dirs !== undefined) {
    for (const path of texts(o.addDirs !== undefined ? "addDirs" : "additionalDirectories", dirs)) {
      args.push(`--add-dir=${path}`);
    }
  }
  if (o.projectConfigRoot !== undefined) {
    args.push(`--project-config-root=${text("projectConfigRoot", o.projectConfigRoot)}`);
  }
  if (o.plugins !== undefined) {
    for (const [i, plugin] of list("plugins", o.plugins).entries()) args.push(pluginArg(i, plugin));
  }
  if (o.settingSources !== undefined) {
    const sources = list("settingSources", o.settingSources).map((source, i) =>
      oneOf(`settingSources[${i}]`, source, SETTING_SOURCES)
    );
    args.push(`--setting-sources=${sources.join(",")}`);
  }
  const settings = settingsArg(o.settings, o.sandbox, viaFile);
  if (settings !== undefined) args.push(`--settings=${settings}`);
  if (o.managedSettings !== undefined) {
    args.push(`--managed-settings=${json("managedSettings", o.managedSettings)}`);
  }
  if (o.agents !== undefined) {
    args.push(`--agents=${jsonArg("agents", o.agents, "agents.json", viaFile)}`);
  }
  const schema = outputSchema(o);
  if (schema !== undefined) args.push(`--json-schema=${schema}`);
  if (o.betas !== undefined) {
    const names = texts("betas", o.betas);
    if (names.length > 0) args.push(`--betas=${names.join(",")}`);
  }
  if (flag("includePartialMessages", o.includePartialMessages)) {
    args.push("--include-partial-messages");
  }
  if (flag("includeHookEvents", o.includeHookEvents)) args.push("--include-hook-events");
  if (flag("forwardSubagentText", o.forwardSubagentText)) args.push("--forward-subagent-text");
  if (o.promptSuggestions !== undefined) {
    args.push(`--prompt-suggestions=${flag("promptSuggestions", o.promptSuggestions)}`);
  }
  if (flag("replayUserMessages", o.replayUserMessages)) args.push("--replay-user-messages");
  if (o.debug !== undefined && o.debug !== false) {
    if (o.debug === true) {
      if (o.debugFile === undefined) args.push("--debug");
    } else if (typeof o.debug === "string") {
      args.push(`--debug=${text("debug", o.debug)}`);
    } else {
      throw wrongType("debug", "a boolean or a string", o.debug);
    }
  }
  if (o.debugFile !== undefined) args.push(`--debug-file=${text("debugFile", o.debugFile)}`);
  const resuming = flag("continue", o.continue) || o.resume !== undefined;
  if (o.continue) args.push("--continue");
  if (o.resume !== undefined) args.push(`--resume=${text("resume", o.resume)}`);
  if (o.resumeSessionAt !== undefined) {
    if (!resuming) throw invalid("resumeSessionAt needs resume (or continue)");
    args.push(`--resume-session-at=${uuid("resumeSessionAt", o.resumeSessionAt)}`);
  }
  if (o.resumeDropsTurn !== undefined) {
    if (o.resumeSessionAt === undefined) throw invalid("resumeDropsTurn needs resumeSessionAt");
    args.push(`--resume-drops-turn=${uuid("resumeDropsTurn", o.resumeDropsTurn)}`);
  }
  if (flag("forkSession", o.forkSession)) args.push("--fork-session");
  if (flag("sessionMirror", o.sessionMirror)) {
    if (!persists(o)) throw invalid("sessionMirror (or sessionStore) needs session persistence");
    args.push("--session-mirror");
  }
  if (flag("awaitClaim", o.awaitClaim)) {
    if (resuming || o.sessionId !== undefined) {
      throw invalid("awaitClaim cannot be combined with resume, continue or sessionId");
    }
    args.push("--await-claim");
  }
  if (o.sessionId !== undefined) args.push(`--session-id=${uuid("sessionId", o.sessionId)}`);
  if (!persists(o)) args.push("--no-session-persistence");
  if (o.title !== undefined) args.push(`--name=${text("title", o.title)}`);
  if (flag("enableFileCheckpointing", o.enableFileCheckpointing)) {
    env.CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING = "true";
  }
  if (o.toolConfig !== undefined) Object.assign(env, toolConfigEnv(o.toolConfig));
  let permissionMode: string | undefined = mode;
  if (o.extraArgs !== undefined) {
    const extra = extraArgs(o.extraArgs);
    args.push(...extra);
    permissionMode = modeOfExtraArgs(extra, mode);
  }
  return {
    launch: { args, files, env, initialize, ...(permissionMode && { permissionMode }) },
    named,
  };
}

/* The mode the CLI takes when extraArgs name one too (the last one counts); undefined when unreadable. */
function modeOfExtraArgs(extra: readonly string[], mode: string): string | undefined {
  let found: string | undefined = mode;
  for (const [i, arg] of extra.entries()) {
    if (arg.startsWith("--permission-mode=")) found = arg.slice("--permission-mode=".length);
    else if (arg === "--permission-mode") found = extra[i + 1];
  }
  return found;
}

function promptToolArg(o: CliOptions): string | undefined {
  const old = o.permissionPromptTool;
  if (o.permissionPromptToolName !== undefined && old !== undefined) {
    throw invalid(
      "pass permissionPromptToolName or its deprecated name permissionPromptTool, not both",
    );
  }
  if (old === false) return undefined;
  if (old !== undefined) return text("permissionPromptTool", old);
  if (o.permissionPromptToolName === undefined) return "stdio";
  return text("permissionPromptToolName", o.permissionPromptToolName);
}

function persists(o: CliOptions): boolean {
  const persist = o.persistSession === undefined
    ? undefined
    : flag("persistSession", o.persistSession);
  const off = o.noSessionPersistence === undefined
    ? undefined
    : flag("noSessionPersistence", o.noSessionPersistence);
  either(["persistSession", "noSessionPersistence"], persist, off);
  return persist ?? off !== true;
}
