import assert from "node:assert/strict";
import {
  allow,
  deny,
  isDuplexError,
  type PermissionHandler,
  type PermissionRequest,
  type SessionEvent,
} from "../../mod.ts";
import { canUseToolRequest, controlCancel } from "../../src/testing/frames.ts";
import type { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { eventsUntil, replyTo, scripted, tick } from "./_helpers.ts";

const INPUT = { command: "touch marker.txt", description: "Create a marker file" };

function ask(cli: ScriptedCli, requestId = "perm-1", input: Record<string, unknown> = INPUT): void {
  cli.emit(canUseToolRequest({ requestId, toolName: "Bash", input, toolUseId: "toolu_1" }));
}

function answerOf(cli: ScriptedCli, requestId = "perm-1"): Promise<Record<string, unknown>> {
  return replyTo(cli, requestId);
}

async function withHandler(
  handler: PermissionHandler | undefined,
  options: { permissionTimeoutMs?: number } = {},
) {
  return await scripted({ echo: false }, {
    ...(handler ? { onPermission: handler } : {}),
    ...options,
  });
}

Deno.test("onPermission allow sends the original input as updatedInput", async () => {
  let seen: PermissionRequest | undefined;
  const { cli, session } = await withHandler((request) => {
    seen = request;
    return { behavior: "allow" };
  });
  await using _ = session;
  ask(cli);
  assert.deepEqual(await answerOf(cli), {
    subtype: "success",
    request_id: "perm-1",
    response: { behavior: "allow", updatedInput: INPUT, toolUseID: "toolu_1" },
  });
  assert.equal(seen?.toolName, "Bash");
  assert.equal(seen?.toolUseId, "toolu_1");
  assert.equal(seen?.signal.aborted, false);
});

Deno.test("onPermission can rewrite the input and add permissions", async () => {
  const { cli, session } = await withHandler(async (request) => {
    await tick(5);
    return {
      behavior: "allow",
      updatedInput: { ...request.input, command: "echo rewritten-by-host" },
      updatedPermissions: [...request.suggestions],
    };
  });
  await using _ = session;
  ask(cli);
  const answer = await answerOf(cli);
  const response = answer.response as Record<string, unknown>;
  assert.deepEqual(response.updatedInput, { ...INPUT, command: "echo rewritten-by-host" });
  assert.ok(Array.isArray(response.updatedPermissions));
});

Deno.test("onPermission deny sends the message, and interrupt when asked", async (t) => {
  for (const interrupt of [false, true]) {
    await t.step(`interrupt: ${interrupt}`, async () => {
      const { cli, session } = await withHandler(() =>
        deny("Denied by the test host", { interrupt })
      );
      await using _ = session;
      ask(cli);
      const response = (await answerOf(cli)).response;
      assert.deepEqual(response, {
        behavior: "deny",
        message: "Denied by the test host",
        ...(interrupt ? { interrupt: true } : {}),
        toolUseID: "toolu_1",
      });
    });
  }
});

Deno.test("No onPermission denies everything with a clear message", async () => {
  const { cli, session } = await withHandler(undefined);
  await using _ = session;
  ask(cli);
  const response = (await answerOf(cli)).response as Record<string, unknown>;
  assert.equal(response.behavior, "deny");
  assert.match(String(response.message), /no permission handler.*onPermission/);
});

Deno.test("A failing or malformed handler denies with the reason and never wedges", async (t) => {
  const cases: [string, PermissionHandler, RegExp][] = [
    ["throws", () => {
      throw new Error("kaboom");
    }, /handler failed \(kaboom\)/],
    ["rejects", () => Promise.reject(new Error("async kaboom")), /async kaboom/],
    // deno-lint-ignore no-explicit-any
    ["returns junk", () => "yes" as any, /invalid decision/],
    // deno-lint-ignore no-explicit-any
    ["returns nothing", () => undefined as any, /invalid decision.*undefined/],
    // deno-lint-ignore no-explicit-any
    ["bad updatedInput", () => ({ behavior: "allow", updatedInput: [1] }) as any, /updatedInput/],
  ];
  for (const [name, handler, reason] of cases) {
    await t.step(name, async () => {
      const { cli, session } = await withHandler(handler);
      await using _ = session;
      const sub = session.subscribe();
      ask(cli);
      const response = (await answerOf(cli)).response as Record<string, unknown>;
      assert.equal(response.behavior, "deny");
      assert.match(String(response.message), reason);
      const events = await eventsUntil(sub, (e) => e.type === "permission_resolved");
      assert.ok(
        events.some((e) => e.type === "diagnostic" && e.kind === "permission_handler_error"),
      );
    });
  }
});

Deno.test("A deferred request is answered later with respondToPermission", async () => {
  const { cli, session } = await withHandler(() => ({ behavior: "defer" }));
  await using _ = session;
  const sub = session.subscribe();
  ask(cli);
  const [event] = await eventsUntil(sub, (e) => e.type === "permission_request");
  assert.ok(event?.type === "permission_request");
  await tick(20);
  assert.equal(cli.received.filter((f) => f.type === "control_response").length, 0, "no reply yet");
  assert.deepEqual(session.pendingPermissions.map((r) => r.requestId), ["perm-1"]);
  // Answered from another task, as a UI would be.
  const answered = await new Promise<boolean>((resolve) =>
    setTimeout(() => resolve(session.respondToPermission(event.request.requestId, allow())), 10)
  );
  assert.equal(answered, true);
  const response = (await answerOf(cli)).response as Record<string, unknown>;
  assert.deepEqual(response.updatedInput, INPUT, "a later plain allow still carries the input");
  assert.equal(await session.respondToPermission("perm-1", deny("late")), false, "answered once");
  assert.equal(session.pendingPermissions.length, 0);
  const resolved = await eventsUntil(sub, (e) => e.type === "permission_resolved");
  assert.deepEqual(resolved.at(-1), {
    type: "permission_resolved",
    requestId: "perm-1",
    toolName: "Bash",
    behavior: "allow",
    source: "respond",
  });
});

Deno.test("respondToPermission: defer is an error, unknown ids are a no-op", async () => {
  const { cli, session } = await withHandler(() => ({ behavior: "defer" }));
  await using _ = session;
  ask(cli);
  await tick(5);
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    session.respondToPermission("perm-1", { behavior: "defer" } as any),
    (e) => isDuplexError(e, "cannot_defer_again") && e.requestId === "perm-1",
  );
  assert.equal(await session.respondToPermission("no-such-id", allow()), false);
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    session.respondToPermission("perm-1", { behavior: "sure" } as any),
    TypeError,
  );
  assert.equal(session.pendingPermissions.length, 1, "still pending after bad answers");
  assert.equal(await session.respondToPermission("perm-1", deny("no")), true);
});

Deno.test("respondToPermission answers before a slow handler; the handler's late answer is dropped", async () => {
  const { promise: gate, resolve: open } = Promise.withResolvers<void>();
  const { cli, session } = await withHandler(async () => {
    await gate;
    return allow();
  });
  await using _ = session;
  ask(cli);
  await tick(5);
  assert.equal(await session.respondToPermission("perm-1", deny("a person said no")), true);
  open();
  await tick(10);
  const replies = cli.received.filter((f) => f.type === "control_response");
  assert.equal(replies.length, 1, "exactly one answer was written");
  assert.equal(
    (replies[0]!.response as { response: { behavior: string } }).response.behavior,
    "deny",
  );
});

Deno.test("A control_cancel_request aborts the handler's signal and suppresses the reply", async () => {
  let signal: AbortSignal | undefined;
  const { cli, session } = await withHandler((request) => {
    signal = request.signal;
    return new Promise((resolve) => {
      request.signal.addEventListener("abort", () => resolve(allow()), { once: true });
    });
  });
  await using _ = session;
  const sub = session.subscribe();
  ask(cli);
  await tick(5);
  cli.emit(controlCancel("perm-1"));
  await eventsUntil(sub, (e) => e.type === "permission_resolved");
  assert.equal(signal?.aborted, true);
  assert.ok(isDuplexError(signal?.reason, "aborted"));
  await tick(20);
  assert.equal(cli.received.filter((f) => f.type === "control_response").length, 0);
  assert.equal(
    await session.respondToPermission("perm-1", allow()),
    false,
    "a cancelled request is dropped",
  );
});

Deno.test("A deferred request cancelled by the CLI is dropped", async () => {
  const { cli, session } = await withHandler(() => ({ behavior: "defer" }));
  await using _ = session;
  ask(cli);
  await tick(5);
  cli.emit(controlCancel("perm-1"));
  await tick(10);
  assert.equal(session.pendingPermissions.length, 0);
  assert.equal(await session.respondToPermission("perm-1", allow()), false);
  assert.equal(cli.received.filter((f) => f.type === "control_response").length, 0);
});

Deno.test("permissionTimeoutMs denies a request nobody answers", async () => {
  const { cli, session } = await withHandler(() => ({ behavior: "defer" }), {
    permissionTimeoutMs: 20,
  });
  await using _ = session;
  ask(cli);
  const response = (await answerOf(cli)).response as Record<string, unknown>;
  assert.equal(response.behavior, "deny");
  assert.match(String(response.message), /within 20 ms/);
});

Deno.test("Closing aborts pending permission handlers", async () => {
  let signal: AbortSignal | undefined;
  const { cli, session } = await withHandler((request) => {
    signal = request.signal;
    return { behavior: "defer" };
  });
  const events: SessionEvent[] = [];
  const sub = session.subscribe();
  ask(cli);
  await tick(5);
  await session.close();
  for await (const event of sub) events.push(event);
  assert.equal(signal?.aborted, true);
  assert.ok(
    events.some((e) =>
      e.type === "permission_resolved" && e.behavior === "cancelled" && e.source === "session"
    ),
  );
});

Deno.test("subscribe({ replayPending }) re-delivers the requests still waiting, for a UI that reconnects", async () => {
  const { cli, session } = await scripted({ echo: false }, {
    onPermission: () => ({ behavior: "defer" }),
  });
  await using _ = session;
  cli.emit(
    {
      type: "control_request",
      request_id: "p1",
      request: { subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" } },
    },
    {
      type: "control_request",
      request_id: "p2",
      request: { subtype: "can_use_tool", tool_name: "Write", input: {} },
    },
  );
  await cli.nextWrite(() => false, { timeoutMs: 30 }).catch(() => {});
  const late = session.subscribe({ replayPending: true });
  const first = await late.next();
  const second = await late.next();
  assert.deepEqual(
    [first.value, second.value].map((e) =>
      e?.type === "permission_request" ? e.request.requestId : e?.type
    ),
    ["p1", "p2"],
  );
  await session.respondToPermission("p1", { behavior: "allow" });
  const again = session.subscribe({ replayPending: true });
  const only = await again.next();
  assert.equal(only.value?.type === "permission_request" && only.value.request.requestId, "p2");
  late.unsubscribe();
  again.unsubscribe();
});
