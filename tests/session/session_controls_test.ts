// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The controls a reconnecting or long-lived client needs, over the scripted
 * CLI: `initializationResult`, `supportedCommands` / `Models` / `Agents`,
 * `accountInfo`, `reinitialize` (the CLI's re-sent requests served once),
 * `readMcpResource`, `getUsage({ skipBehaviors })`, and `streamInput`.
 */

import assert from "node:assert/strict";
import {
  DuplexSession,
  isDuplexError,
  type PermissionRequest,
  type StreamInputItem,
  type Turn,
} from "../../mod.ts";
import {
  canUseToolRequest,
  controlError,
  controlSuccess,
  ScriptedCli,
} from "../../src/testing/mod.ts";
import { replyTo, tick } from "./_helpers.ts";

type Frame = Record<string, unknown>;
const requestOf = (frame: Frame) => frame.request as Record<string, unknown>;
const isInitialize = (frame: Frame) =>
  frame.type === "control_request" && requestOf(frame).subtype === "initialize";

const REPLY = {
  commands: [{ name: "review", description: "Review", argumentHint: "" }],
  agents: [{ name: "Explore", description: "Looks around" }, { nameless: true }],
  models: [{ value: "sonnet", displayName: "Sonnet" }],
  account: { apiKeySource: "ANTHROPIC_API_KEY", tokenSource: "none" },
  output_style: "default",
  available_output_styles: ["default"],
  pid: 4242,
  claude_code_version: "2.1.332",
  hooks_applied: true,
  hook_on_failure_supported: true,
};

/** A CLI that answers each `initialize` with `REPLY` (its pid the count) and the envelope's extra fields. */
function initializingCli(envelope: (count: number) => Frame = () => ({})) {
  const cli = new ScriptedCli({ echo: true });
  let count = 0;
  cli.on(isInitialize, (frame) => {
    count++;
    const response = controlSuccess(String(frame.request_id), { ...REPLY, pid: count });
    Object.assign(response.response, envelope(count));
    return [response];
  });
  return { cli, initializes: () => cli.received.filter(isInitialize).map(requestOf) };
}

Deno.test("initializationResult() and the readers over it: the startup's reply", async (t) => {
  const { cli } = initializingCli();
  await using session = await DuplexSession.start({ transport: cli.transport, initialize: true });
  await t.step("initializationResult() resolves with the reply payload", async () => {
    const reply = await session.initializationResult();
    assert.equal(reply.pid, 1);
    assert.equal(reply.claude_code_version, "2.1.332");
    assert.equal(reply, await session.initializationResult(), "the same reply, not sent again");
  });
  await t.step("supportedModels, supportedAgents (named ones), accountInfo", async () => {
    assert.deepEqual(await session.supportedModels(), REPLY.models);
    assert.deepEqual(await session.supportedAgents(), [REPLY.agents[0]]);
    assert.deepEqual(await session.accountInfo(), REPLY.account);
  });
  await t.step("supportedCommands: the reply's, then the latest commands_changed", async () => {
    assert.deepEqual(await session.supportedCommands(), REPLY.commands);
    const pushed = [{ name: "deploy", description: "Ships it", argumentHint: "" }];
    cli.emit({ type: "system", subtype: "commands_changed", commands: pushed, session_id: "s" });
    await tick(5);
    assert.deepEqual(await session.supportedCommands(), pushed);
    await session.reinitialize();
    assert.deepEqual(await session.supportedCommands(), REPLY.commands, "a fresh reply is newer");
  });
  assert.equal(cli.received.filter(isInitialize).length, 2, "startup and the reinitialize");
});

Deno.test("initializationResult() on a session that sent no initialize sends one, once", async () => {
  const { cli, initializes } = initializingCli();
  await using session = await DuplexSession.start({ transport: cli.transport });
  await session.send("hi");
  assert.equal(initializes().length, 0, "nothing needed one at start");
  const [a, b] = await Promise.all([session.initializationResult(), session.accountInfo()]);
  assert.equal(a.pid, 1);
  assert.deepEqual(b, REPLY.account);
  assert.deepEqual(initializes(), [{ subtype: "initialize" }], "one, with no fields");
  assert.equal(session.info?.pid, 1, "info reads it too");
});

Deno.test("initializationResult() fails as the startup did, and is bounded", async (t) => {
  await t.step("a failed startup initialize rejects it with the same error", async () => {
    const cli = new ScriptedCli({ echo: true });
    cli.on(isInitialize, (f) => [controlError(String(f.request_id), "bad init")]);
    await using session = await DuplexSession.start({ transport: cli.transport, initialize: true });
    const startup = await session.initialized.catch((e) => e);
    const result = await session.initializationResult().catch((e) => e);
    assert.ok(isDuplexError(result, "control_failed"), String(result));
    assert.equal(result, startup);
    assert.ok(isDuplexError(await session.supportedModels().catch((e) => e), "control_failed"));
  });
  await t.step("a reply that never comes: timeoutMs and the signal end the wait", async () => {
    const cli = new ScriptedCli({ echo: false }); // never answers initialize
    await using session = await DuplexSession.start({
      transport: cli.transport,
      initialize: true,
      controlTimeoutMs: 60_000,
    });
    const waited = await session.initializationResult({ timeoutMs: 30 }).catch((e) => e);
    assert.ok(isDuplexError(waited, "timeout"), String(waited));
    const controller = new AbortController();
    const aborted = session.accountInfo({ signal: controller.signal });
    controller.abort(new Error("gave up"));
    await assert.rejects(aborted, /gave up/);
    await assert.rejects(session.initializationResult({ timeoutMs: -1 }), RangeError);
  });
});

Deno.test("after a claim, initializationResult() is the claim's, with the first reply's confirmations", async () => {
  const { cli } = initializingCli();
  cli.on("control_request:claim_session", (frame) => [
    controlSuccess(String(frame.request_id), {
      status: "ok",
      cwd: "/srv/a",
      session_id: "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f",
      initialize: { commands: [], models: [{ value: "haiku" }], pid: 77 },
    }),
  ]);
  await using session = await DuplexSession.start({ transport: cli.transport, initialize: true });
  await session.initialized;
  await session.claimSession({ cwd: "/srv/a" });
  const reply = await session.initializationResult();
  assert.equal(reply.pid, 77);
  assert.equal(reply.hooks_applied, true, "kept from the first reply");
  assert.deepEqual(await session.supportedModels(), [{ value: "haiku" }]);
});

Deno.test("reinitialize() sends the first initialize's fields and takes its reply", async () => {
  const { cli, initializes } = initializingCli();
  await using session = await DuplexSession.start({
    transport: cli.transport,
    hooks: { PreToolUse: [{ matcher: "Bash", run: () => ({}) }] },
    appendSystemPrompt: "Be brief.",
  });
  assert.equal((await session.initialized)?.pid, 1);
  const reply = await session.reinitialize();
  assert.equal(reply.pid, 2);
  assert.equal(session.info?.pid, 2, "info describes the fresh reply");
  assert.equal((await session.initializationResult()).pid, 2);
  const [first, second] = initializes();
  assert.deepEqual(second, first, "same fields: the hooks under the same callback ids");
  assert.deepEqual(second?.hooks, {
    PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"] }],
  });
});

function permissionCli(envelope: (count: number) => Frame) {
  const { cli } = initializingCli(envelope);
  const calls: PermissionRequest[] = [];
  return { cli, calls };
}

Deno.test("reinitialize(): a re-sent request being served is the same request", async () => {
  const ask = canUseToolRequest({
    requestId: "perm-1",
    toolName: "Bash",
    input: { command: "ls" },
  });
  const { cli, calls } = permissionCli((n) =>
    n === 1 ? {} : { pending_permission_requests: [ask] }
  );
  await using session = await DuplexSession.start({
    transport: cli.transport,
    initialize: true,
    onPermission: (request) => {
      calls.push(request);
      return { behavior: "defer" };
    },
  });
  await session.initialized;
  const events = session.subscribe();
  cli.emit(ask);
  await tick(5);
  await session.reinitialize();
  await session.reinitialize();
  assert.equal(calls.length, 1, "no second handler call");
  assert.deepEqual(session.pendingPermissions.map((p) => p.requestId), ["perm-1"]);
  assert.equal(await session.respondToPermission("perm-1", { behavior: "allow" }), true);
  const answer = await replyTo(cli, "perm-1");
  assert.equal((answer.response as { behavior?: string }).behavior, "allow");
  const seen = [];
  for (;;) {
    const next = await Promise.race([events.next(), tick(20).then(() => undefined)]);
    if (!next || next.done) break;
    if (next.value.type === "permission_request") seen.push(next.value.request.requestId);
  }
  assert.deepEqual(seen, ["perm-1"], "one permission_request event");
});

Deno.test("reinitialize(): an unseen request is new, an answered one gets its answer again", async () => {
  const fresh = canUseToolRequest({
    requestId: "perm-new",
    toolName: "Write",
    input: { file_path: "/w/a.txt", content: "x" },
  });
  (fresh.request as Record<string, unknown>).server_policy_ask_only = true;
  const old = canUseToolRequest({
    requestId: "perm-old",
    toolName: "Bash",
    input: { command: "ls" },
  });
  const dialog = {
    type: "control_request",
    request_id: "dialog-1",
    request: { subtype: "request_user_dialog", dialog_kind: "x" },
  };
  const mistyped = {
    type: "control_request",
    request_id: "odd",
    request: { subtype: "hook_callback" },
  };
  const { cli, calls } = permissionCli((n) =>
    n === 1 ? {} : {
      pending_permission_requests: [old, fresh, mistyped, "junk"],
      pending_user_dialog_requests: [dialog],
    }
  );
  const dialogs: unknown[] = [];
  await using session = await DuplexSession.start({
    transport: cli.transport,
    initialize: true,
    onPermission: (request) => {
      calls.push(request);
      return request.requestId === "perm-old"
        ? { behavior: "deny", message: "no" }
        : { behavior: "defer" };
    },
    onUserDialog: (request) => {
      dialogs.push(request);
      return { action: "dismissed" } as never;
    },
  });
  await session.initialized;
  cli.emit(old);
  const first = await replyTo(cli, "perm-old");
  assert.equal((first.response as { behavior?: string }).behavior, "deny");
  await session.reinitialize();
  const again = await replyTo(cli, "perm-old");
  assert.deepEqual(again, first, "the same answer, written again");
  assert.deepEqual(calls.map((c) => c.requestId), ["perm-old", "perm-new"], "asked once each");
  assert.deepEqual(session.pendingPermissions.map((p) => p.requestId), ["perm-new"]);
  assert.equal(
    calls[1]?.serverPolicyAskOnly,
    undefined,
    "a re-sent request's ask-only is not trusted",
  );
  await tick(5);
  assert.equal(dialogs.length, 1, "the re-sent dialog request is served");
  assert.ok(
    !cli.received.some((f) => (f.response as { request_id?: string })?.request_id === "odd"),
    "a hook_callback in the permission list is not read",
  );
});

Deno.test("readMcpResource and getUsage write the SDK's wire fields", async () => {
  const cli = new ScriptedCli({ echo: false });
  const contents = [{ uri: "ui://w/app.html", mimeType: "text/html", text: "<p>hi</p>" }];
  cli.on("control_request", (f) => {
    const subtype = requestOf(f).subtype;
    return [
      controlSuccess(String(f.request_id), subtype === "mcp_read_resource" ? { contents } : {}),
    ];
  });
  await using session = await DuplexSession.start({ transport: cli.transport });
  assert.deepEqual(await session.readMcpResource("widgets", "ui://w/app.html"), { contents });
  await session.getUsage({ skipBehaviors: true });
  await session.getUsage({ skipBehaviors: false });
  assert.deepEqual(cli.received.map(requestOf), [
    { subtype: "mcp_read_resource", serverName: "widgets", uri: "ui://w/app.html" },
    { subtype: "get_usage", skip_behaviors: true },
    { subtype: "get_usage" },
  ]);
});

Deno.test("reloadPlugins() writes the SDK's options as wire fields, and refuses bad ones", async (t) => {
  const cli = new ScriptedCli({ echo: false });
  cli.on("control_request", (f) => [controlSuccess(String(f.request_id), { commands: [] })]);
  await using session = await DuplexSession.start({ transport: cli.transport });
  await t.step("every option, then none", async () => {
    await session.reloadPlugins({
      holdOnCacheImpact: true,
      refuseIfBusy: false,
      addPlugins: [{ type: "local", path: "/srv/plugins/a" }, {
        type: "local",
        path: "C:\\plugins\\b",
        skipMcpDiscovery: true,
      }],
    });
    await session.reloadPlugins();
    assert.deepEqual(cli.received.map(requestOf), [
      {
        subtype: "reload_plugins",
        hold_on_cache_impact: true,
        add_plugins: [{ type: "local", path: "/srv/plugins/a" }, {
          type: "local",
          path: "C:\\plugins\\b",
          skipMcpDiscovery: true,
        }],
        refuse_if_busy: false,
      },
      { subtype: "reload_plugins" },
    ]);
  });
  await t.step(
    "a relative path, a non-local plugin, a non-boolean: invalid_argument, nothing sent",
    async () => {
      const before = cli.received.length;
      for (
        const bad of [
          { addPlugins: [{ type: "local", path: "plugins/a" }] },
          { addPlugins: [{ type: "remote", path: "/a" }] },
          { addPlugins: "/a" },
          { refuseIfBusy: "yes" },
          { addPlugins: [{ type: "local", path: "/a", skipMcpDiscovery: 1 }] },
        ]
      ) {
        await assert.rejects(
          session.reloadPlugins(bad as never),
          (e) =>
            isDuplexError(e) && e.kind === "invalid_argument" && /reload plugins/.test(e.message),
        );
      }
      assert.equal(cli.received.length, before);
    },
  );
});

/** A stream that records whether it was stopped (its `return()`). */
function recorded(items: unknown[], options: { throwAt?: number; stallAt?: number } = {}) {
  const state = { stopped: false };
  let index = 0;
  const iterator: AsyncIterator<StreamInputItem> = {
    next: async () => {
      const at = index++;
      if (options.throwAt === at) throw new Error("the feed broke");
      if (options.stallAt === at) return await new Promise<never>(() => {});
      return at < items.length
        ? { done: false, value: items[at] as StreamInputItem }
        : { done: true, value: undefined };
    },
    return: () => {
      state.stopped = true;
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return { stream: { [Symbol.asyncIterator]: () => iterator }, state };
}

const userLines = (cli: ScriptedCli) => cli.received.filter((f) => f.type === "user");

Deno.test("streamInput() writes each item as a queued line, in order", async (t) => {
  const cli = new ScriptedCli({ echo: true });
  await using session = await DuplexSession.start({ transport: cli.transport });
  await t.step(
    "strings, content blocks and SDK-shaped messages; onTurn gives each turn",
    async () => {
      const turns: Promise<Turn>[] = [];
      const lines: { uuid: string; index: number }[] = [];
      async function* feed(): AsyncGenerator<StreamInputItem> {
        yield "one";
        yield [{ type: "text", text: "two" }];
        yield {
          type: "user",
          message: { role: "user", content: "three" },
          parent_tool_use_id: null,
          uuid: "u-3",
          priority: "next",
          origin: { kind: "human" },
          timestamp: "2026-12-02T08:00:00.000Z",
          client_composed: true,
          session_id: "ignored",
        };
      }
      const result = await session.streamInput(feed(), {
        onTurn: (turn, line) => {
          turns.push(turn);
          lines.push(line);
        },
      });
      assert.deepEqual(result, { sent: 3 });
      const written = userLines(cli);
      assert.deepEqual(written.map((f) => (f.message as { content: unknown }).content), [
        [{ type: "text", text: "one" }],
        [{ type: "text", text: "two" }],
        [{ type: "text", text: "three" }],
      ]);
      const third = written[2] as Frame;
      assert.equal(third.uuid, "u-3");
      assert.equal(third.priority, "next");
      assert.deepEqual(third.origin, { kind: "human" });
      assert.equal(third.timestamp, "2026-12-02T08:00:00.000Z");
      assert.equal(third.client_composed, true);
      assert.equal(third.session_id, "", "the line's own session_id, not the item's");
      assert.deepEqual(lines.map((l) => l.index), [0, 1, 2]);
      assert.equal(lines[2]?.uuid, "u-3");
      const texts = (await Promise.all(turns)).map((turn) => turn.result.text);
      assert.deepEqual(texts, ["Echo: one", "Echo: two", "Echo: three"]);
    },
  );
  await t.step("a plain iterable works; its turns may still run when it resolves", async () => {
    assert.deepEqual(await session.streamInput(["four", "five"]), { sent: 2 });
    assert.equal((await session.send("six", { queue: true })).result.text, "Echo: six");
  });
});

Deno.test("streamInput() stops with a typed error on a bad item, a broken stream, a signal", async (t) => {
  const cli = new ScriptedCli({ echo: true });
  await using session = await DuplexSession.start({ transport: cli.transport });
  const bad: [string, unknown][] = [
    ["an empty string", ""],
    ["a number", 42],
    ["a message of another role", { type: "user", message: { role: "assistant", content: "x" } }],
    ["a line for a tool use", {
      type: "user",
      message: { role: "user", content: "x" },
      parent_tool_use_id: "toolu_1",
    }],
    ["a bad priority", { type: "user", message: { role: "user", content: "x" }, priority: "soon" }],
    ["a bad origin", {
      type: "user",
      message: { role: "user", content: "x" },
      origin: { kind: 3 },
    }],
  ];
  for (const [what, item] of bad) {
    await t.step(`${what}: invalid_argument naming the item; the stream is stopped`, async () => {
      const before = userLines(cli).length;
      const { stream, state } = recorded(["fine", item, "never"]);
      const error = await session.streamInput(stream).catch((e) => e);
      assert.ok(isDuplexError(error, "invalid_argument"), String(error));
      assert.match(error.message, /item 1/);
      assert.equal(userLines(cli).length, before + 1, "only the item before it was written");
      assert.equal(state.stopped, true);
    });
  }
  await t.step("a stream that throws: aborted, with its error as the cause", async () => {
    const { stream, state } = recorded(["fine", "never"], { throwAt: 1 });
    const error = await session.streamInput(stream).catch((e) => e);
    assert.ok(isDuplexError(error, "aborted"), String(error));
    assert.match(String((error.cause as Error).message), /the feed broke/);
    assert.equal(state.stopped, false, "a stream that threw is done already");
  });
  await t.step("the signal stops a stream waiting for its next item", async () => {
    const { stream, state } = recorded(["fine"], { stallAt: 1 });
    const controller = new AbortController();
    const streaming = session.streamInput(stream, { signal: controller.signal });
    await tick(10);
    controller.abort(new Error("stop reading"));
    await assert.rejects(streaming, /stop reading/);
    assert.equal(state.stopped, true);
  });
  await t.step("not a stream: invalid_argument, nothing read", async () => {
    for (const value of ["text", 7, null, { next: () => {} }]) {
      const error = await session.streamInput(value as never).catch((e) => e);
      assert.ok(isDuplexError(error, "invalid_argument"), String(error));
    }
  });
  await t.step("a closed session refuses", async () => {
    await session.close();
    const error = await session.streamInput(["late"]).catch((e) => e);
    assert.ok(isDuplexError(error, "closed"), String(error));
  });
});
