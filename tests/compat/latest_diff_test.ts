/**
 * The drift watch's readers and comparisons (`.ci/_latest_*.ts`) on fixed
 * inputs: a small SDK `sdk.d.ts` in two versions, a small library, a CLI's
 * `--help`, a `deno test` run's summary.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  blankComments,
  declarations,
  literals,
  properties,
  resolve,
} from "../../.ci/_latest_dts.ts";
import {
  bundleSubtypes,
  helpFlags,
  libraryCatalogue,
  schemaLiterals,
  sdkCatalogue,
  sdkHookEvents,
  sourceFlags,
} from "../../.ci/_latest_catalogue.ts";
import {
  compareNames,
  diffCatalogues,
  diffLists,
  type DriftItem,
  failedTests,
  renderReport,
} from "../../.ci/_latest_diff.ts";

/** The pinned SDK, shaped as the bundled `sdk.d.ts` is. */
const PINNED_DTS = `
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages.mjs';
export declare const HOOK_EVENTS: readonly ['PreToolUse', 'Stop'];
export declare type Options = {
    /** The model. */
    model?: string;
    /**
     * How MCP servers reach the CLI.
     * @default 'argv'
     */
    mcpServersDelivery?: 'argv' | 'initialize';
    canUseTool?: CanUseTool;
    cwd?: string;
};
export declare type SDKMessage = SDKAssistantMessage | SDKResultMessage | SDKSystemMessage | SDKToolProgressMessage;
export declare type SDKAssistantMessage = {
    type: 'assistant';
    message: BetaMessage;
    /** Not a field: a comment with a brace { and a ; */
    parent_tool_use_id: string | null;
};
export declare type SDKResultMessage = SDKResultSuccess | SDKResultError;
declare type SDKResultSuccess = { type: 'result'; subtype: 'success'; result: string };
declare type SDKResultError = {
    type: 'result';
    subtype: 'error_during_execution' | 'error_max_turns';
    errors: string[];
};
export declare type SDKSystemMessage = SDKMessageBase & {
    type: 'system';
    subtype: 'init';
    tools: string[];
};
declare type SDKMessageBase = { uuid: UUID; session_id: string };
export declare type SDKToolProgressMessage = {
    type: 'tool_progress';
    tool_use_id: string;
    elapsed_time_seconds: number;
};
declare type SDKControlRequestInner = SDKControlInterruptRequest | coreTypes.SDKHookCallbackRequest;
declare type SDKControlInterruptRequest = {
    subtype: 'interrupt';
    cancel_queued?: boolean;
};
declare type SDKHookCallbackRequest = {
    subtype: 'hook_callback';
    callback_id: string;
    input: coreTypes.HookInput;
};
`;

/** The newest SDK: a frame type, a subtype, a control subtype, a hook event, an option, a field, a new default; `cwd` removed. */
const NEWEST_DTS = PINNED_DTS
  .replace("['PreToolUse', 'Stop']", "['PreToolUse', 'Stop', 'PostTurn']")
  .replace("    cwd?: string;\n", "    effortLevel?: 'low' | 'high';\n")
  .replace("@default 'argv'", "@default 'initialize'")
  .replace(
    "| SDKToolProgressMessage;",
    "| SDKToolProgressMessage | SDKGoalMessage | SDKStatusMessage;",
  )
  .replace("'error_max_turns'", "'error_max_turns' | 'error_max_budget_usd'")
  .replace(
    "    elapsed_time_seconds: number;\n",
    "    elapsed_time_seconds: number;\n    description?: string;\n",
  )
  .replace(
    "| coreTypes.SDKHookCallbackRequest;",
    "| coreTypes.SDKHookCallbackRequest | SDKControlSetColorRequest;",
  ) +
  `
export declare type SDKGoalMessage = { type: 'active_goal'; value: object | null };
export declare type SDKStatusMessage = { type: 'system'; subtype: 'status'; status: string | null };
declare type SDKControlSetColorRequest = { subtype: 'set_color'; color: string };
`;

/** A library that knows the pinned SDK but `tool_progress`, with the formatting of `src/protocol/`. */
const LIBRARY = {
  protocol: `
export interface FrameCommon {
  /** This frame's own id. */
  uuid?: string;
}
export interface AssistantFrame extends FrameCommon {
  /** Always \`"assistant"\`. */
  type: "assistant";
  message: { id: string };
}
export interface ResultFrame extends FrameCommon {
  type: "result";
  subtype: ResultSubtype | string;
}
export type ResultSubtype =
  | "success"
  | "error_during_execution"
  | "error_max_turns";
export interface SystemFrameMap {
  /** The turn starts. */
  init: SystemInitFrame;
}
export interface SystemInitFrame extends FrameCommon {
  type: "system";
  subtype: "init";
  tools?: string[];
}
export interface SystemOtherFrame extends FrameCommon {
  type: "system";
  subtype: string;
  [field: string]: unknown;
}
export type SystemFrame = SystemFrameMap[SystemSubtype] | SystemOtherFrame;
export interface UnknownFrame {
  type: "unknown";
  frameType: string;
}
export type CliFrame = SystemFrame | AssistantFrame | ResultFrame | UnknownFrame;
export interface ControlRequestMap {
  /** Interrupts the turn. */
  interrupt: { request: { cancel_queued?: boolean }; response: { still_queued: string[] } };
}
`,
  options: `
export interface CliOptions {
  /** The model. */
  readonly model?: string;
}
export interface SubprocessOptions extends CliOptions {
  readonly cwd?: string | URL;
}
export interface DuplexSessionOptions {
  readonly onPermission?: (request: unknown) => void;
}
`,
  router: `
    this.#routes = new Map<string, Route>([
      [
        "can_use_tool",
        (id, request) => this.permissions.handle(id, request),
      ],
      ["hook_callback", (id, request) => this.#hook(id, request)],
    ]);
`,
  comparison: `
# Compared

## From the official SDK: option by option

| SDK option | @duplex/claude |
| \`canUseTool\` | \`start({ onPermission })\` |
| \`mcpServersDelivery\` | not needed |

## Next section

\`effortLevel\` is mentioned here, outside the section.
`,
  hookEvents: ["PreToolUse", "Stop"],
};

const VERSIONS = { pinned: "0.3.332", newest: "0.3.333" };

Deno.test("blankComments keeps the length and lines, blanks comments and string contents", () => {
  const source = "a /* {x} */ b // c;\n'd;{' \"e\" `f`";
  const blank = blankComments(source);
  assert.equal(blank.length, source.length);
  assert.equal(blank, "a           b      \n'   ' \" \" ` `");
  assert.equal(blankComments(source, false), "a           b      \n'd;{' \"e\" `f`");
});

Deno.test("declarations, properties, literals: aliases, interfaces, defaults, quoted names, methods", () => {
  const decls = declarations(`
export declare type A<T = string> = { readonly 'quoted-name'?: 'x' | "y"; run(a: number): void; nested: { inner: 1; more: 2 }[] };
interface B extends A, C<string> {
  /** @default 5 */
  b: number;
}
`);
  assert.deepEqual([...decls.keys()], ["A", "B"]);
  assert.deepEqual(decls.get("B")!.extends, ["A", "C<string>"]);
  const shape = resolve("A", decls).shapes[0]!;
  assert.deepEqual([...shape.keys()], ["quoted-name", "run", "nested"]);
  assert.deepEqual(shape.get("quoted-name"), { type: `'x' | "y"`, optional: true });
  assert.equal(shape.get("run")!.type, "function");
  assert.equal(shape.get("nested")!.type, "{ inner: 1; more: 2 }[]");
  assert.deepEqual(properties(decls.get("B")!.body).get("b"), {
    type: "number",
    optional: false,
    defaultValue: "5",
  });
  assert.deepEqual(literals(`'a' | "b" | string | 3`), ["a", "b"]);
  const b = resolve("B", decls);
  assert.deepEqual([...b.shapes[0]!.keys()], ["quoted-name", "run", "nested", "b"]);
  assert.deepEqual(b.unresolved, ["C<string>"]);
});

Deno.test("sdkCatalogue reads frames, subtypes, controls, hook events, options, defaults, fields", () => {
  const sdk = sdkCatalogue(PINNED_DTS);
  assert.deepEqual(Object.fromEntries(sdk.frames), {
    assistant: [],
    result: ["success", "error_during_execution", "error_max_turns"],
    system: ["init"],
    tool_progress: [],
  });
  assert.deepEqual(sdk.controlSubtypes, ["interrupt", "hook_callback"]);
  assert.deepEqual(sdk.hookEvents, ["PreToolUse", "Stop"]);
  assert.deepEqual(sdkHookEvents(PINNED_DTS), ["PreToolUse", "Stop"]);
  assert.deepEqual(sdk.options, ["model", "mcpServersDelivery", "canUseTool", "cwd"]);
  assert.deepEqual(Object.fromEntries(sdk.defaults), { mcpServersDelivery: "'argv'" });
  assert.deepEqual(sdk.fields.get("assistant"), ["type", "message", "parent_tool_use_id"]);
  assert.deepEqual(sdk.fields.get("system/init"), [
    "uuid",
    "session_id",
    "type",
    "subtype",
    "tools",
  ]);
  assert.deepEqual(sdk.fields.get("control/hook_callback"), ["subtype", "callback_id", "input"]);
  assert.deepEqual(sdk.unresolved, []);
});

Deno.test("libraryCatalogue reads CliFrame, SystemFrameMap, ResultSubtype, controls, routes, options", () => {
  const known = libraryCatalogue(LIBRARY);
  assert.deepEqual(Object.fromEntries(known.frames), {
    system: ["init"],
    assistant: [],
    result: ["success", "error_during_execution", "error_max_turns"],
  });
  assert.deepEqual(known.fields.get("system/init"), ["uuid", "type", "subtype", "tools"]);
  assert.deepEqual(known.controlSubtypes, ["interrupt", "can_use_tool", "hook_callback"]);
  assert.deepEqual(known.options, [
    "model",
    "cwd",
    "onPermission",
    "canUseTool",
    "mcpServersDelivery",
  ]);
  assert.deepEqual(known.unresolved, ["SystemFrameMap[SystemSubtype]"]);
});

Deno.test("diffCatalogues lists what the newest SDK added, changed and removed", () => {
  const items = diffCatalogues({
    newest: sdkCatalogue(NEWEST_DTS),
    pinned: sdkCatalogue(PINNED_DTS),
    known: libraryCatalogue(LIBRARY),
  }, VERSIONS);
  const lines = items.map((item) => `${item.section}: ${item.name}: ${item.note}`);
  assert.deepEqual(lines, [
    "frame types: tool_progress: not known here (already in 0.3.332)",
    "frame types: active_goal: new in 0.3.333, not known here",
    "subtypes: result/error_max_budget_usd: new in 0.3.333, not known here",
    "subtypes: system/status: new in 0.3.333, not known here",
    "control subtypes: set_color: new in 0.3.333, not known here",
    "hook events: PostTurn: new in 0.3.333, not known here",
    "options: effortLevel: new in 0.3.333, not known here",
    "options: cwd: removed in 0.3.333 (known here)",
    "options: mcpServersDelivery: default 'argv' -> 'initialize'",
    "fields: tool_progress.description: new in 0.3.333",
  ]);
});

Deno.test("diffCatalogues finds nothing when the sides agree, and a reordered HOOK_EVENTS", () => {
  const pinned = sdkCatalogue(PINNED_DTS);
  assert.deepEqual(diffCatalogues({ newest: pinned, pinned, known: pinned }, VERSIONS), []);
  const reordered = sdkCatalogue(
    PINNED_DTS.replace("['PreToolUse', 'Stop']", "['Stop', 'PreToolUse']"),
  );
  assert.deepEqual(diffCatalogues({ newest: reordered, pinned, known: pinned }, VERSIONS), [
    { section: "hook events", name: "HOOK_EVENTS", note: "order changed" },
  ]);
  assert.deepEqual(
    compareNames("x", { newest: ["a"], pinned: ["b"], known: [] }, VERSIONS),
    [
      { section: "x", name: "a", note: "new in 0.3.333, not known here" },
      { section: "x", name: "b", note: "removed in 0.3.333" },
    ],
  );
});

Deno.test("helpFlags reads the option column; sourceFlags the flags a builder passes", () => {
  const help = `Usage: claude [options] [command] [prompt]

Options:
  -d, --debug [filter]          Enable debug mode (see --verbose)
  --verbose                     Override verbose mode setting
  --allowedTools, --allowed-tools <tools...>  Tools to allow
  -p, --print                   Print response and exit
Commands:
  mcp                           Configure MCP servers (--mcp-config is separate)
`;
  assert.deepEqual(helpFlags(help), [
    "--allowed-tools",
    "--allowedTools",
    "--debug",
    "--print",
    "--verbose",
  ]);
  const source =
    'args.push("--verbose", `--model=${m}`, "--await-claim");\nconst x = "--not a flag";';
  assert.deepEqual(sourceFlags(source), ["--await-claim", "--model", "--verbose"]);
  assert.deepEqual(
    diffLists("CLI flags", {
      pinned: ["--print", "--session-mirror"],
      newest: ["--print", "--watch"],
      used: ["--session-mirror"],
    }, { pinned: "2.1.332", newest: "2.1.333" }),
    [
      { section: "CLI flags", name: "--watch", note: "new in 2.1.333" },
      {
        section: "CLI flags",
        name: "--session-mirror",
        note: "removed in 2.1.333 (this library passes it)",
      },
    ],
  );
});

Deno.test("bundleSubtypes reads the subtype literals of a bundle", () => {
  const mjs =
    `q({subtype:"set_peer_delivery",x}),{subtype: 'interrupt'},subtype:"interrupt";subtype:x`;
  assert.deepEqual(bundleSubtypes(mjs), ["interrupt", "set_peer_delivery"]);
});

Deno.test("schemaLiterals reads the type and subtype literals of a CLI's schemas", () => {
  const grep =
    'subtype:x("ui_view")\ntype:Nq("continue")\nsubtype:$a("interrupt")\ntype:x("continue")\n';
  assert.deepEqual(schemaLiterals(grep), {
    types: ["continue"],
    subtypes: ["interrupt", "ui_view"],
  });
  assert.deepEqual(schemaLiterals(""), { types: [], subtypes: [] });
});

Deno.test("failedTests reads deno test's FAILURES summary", () => {
  const output = `running 2 tests from ./tests/e2e/session_e2e_test.ts
ERRORS

a ... b => ./tests/e2e/x.ts:3:1
error: AssertionError

FAILURES

DuplexSession + subprocess ... a tool call allowed => ./tests/e2e/session_e2e_test.ts:69:1
hooks: every reachable event => ./tests/e2e/hooks_e2e_test.ts:62:1

FAILED | 1 passed (3 steps) | 2 failed (1 step) (41s)
`;
  assert.deepEqual(failedTests(output), [
    "DuplexSession + subprocess ... a tool call allowed => ./tests/e2e/session_e2e_test.ts:69:1",
    "hooks: every reachable event => ./tests/e2e/hooks_e2e_test.ts:62:1",
  ]);
  assert.deepEqual(failedTests("ok | 3 passed | 0 failed (2s)\n"), []);
});

Deno.test("renderReport prints every section, its notes and items, and a count", () => {
  const items: DriftItem[] = [
    { section: "options", name: "effortLevel", note: "new in 0.3.333, not known here" },
    { section: "options", name: "x", note: "removed in 0.3.333" },
  ];
  const report = renderReport("Drift: title", items, new Map([["e2e core", ["skipped"]]]));
  assert.match(report, /^Drift: title\n\n## frame types\n {3}no change\n/);
  assert.match(
    report,
    /## options\n - effortLevel {2}new in 0\.3\.333, not known here\n - x {12}removed in 0\.3\.333\n/,
  );
  assert.match(report, /## e2e core\n {3}skipped\n {3}no change\n/);
  assert.match(report, /\n2 item\(s\) of drift\.$/);
});
