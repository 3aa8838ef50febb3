/**
 * End-to-end scenarios of {@linkcode DuplexSession} over the subprocess
 * transport, against the real `claude` CLI and the fake Messages API. Each
 * scenario checks what the user sees (turns, events, errors) and what reached
 * the model (the fake API's request log).
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  allow,
  defer,
  deny,
  DuplexSession,
  isDuplexError,
  type PermissionHandler,
  type PermissionRequest,
  type SessionEvent,
  type Subscription,
} from "../../mod.ts";
import type { StreamEventFrame } from "../../src/protocol/mod.ts";
import { e2eTest, exists, processAlive, sandboxedCli, waitUntil, withSandbox } from "./_harness.ts";
import type { FakeApi } from "./fake_api.ts";

/** Bound on every turn: a hung turn fails its step (interrupted) instead of hanging the suite. */
const TURN = { timeoutMs: 20_000 } as const;

/** Waits for the next event matching `pred` on a subscription (bounded). */
async function nextEvent(
  sub: Subscription<SessionEvent>,
  pred: (event: SessionEvent) => boolean,
  timeoutMs = 15_000,
): Promise<SessionEvent> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Cannot see the event within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    for (;;) {
      const next = await Promise.race([sub.next(), expired]);
      if (next.done) throw new Error("Cannot see the event: the subscription ended");
      if (pred(next.value)) return next.value;
    }
  } finally {
    clearTimeout(timer);
  }
}

function isTextDelta(event: SessionEvent): boolean {
  if (event.type !== "stream_event") return false;
  const delta = (event as StreamEventFrame).event.delta as { type?: string } | undefined;
  return event.event.type === "content_block_delta" && delta?.type === "text_delta";
}

function deltaText(event: SessionEvent): string {
  const delta = (event as StreamEventFrame).event.delta as { text?: string } | undefined;
  return delta?.text ?? "";
}

/** The Messages requests received since index `from` (of `api.messageRequests`). */
function requestsSince(api: FakeApi, from: number): FakeApi["requests"] {
  return api.messageRequests.slice(from);
}

e2eTest(
  "DuplexSession + subprocess: turns, permissions, partial messages, abort",
  async (t, cli) => {
    await withSandbox(async ({ api, work, env }) => {
      const asked: PermissionRequest[] = [];
      let decide: PermissionHandler = () => deny("No decision was scripted for this step");
      await using session = await DuplexSession.start({
        transport: sandboxedCli(cli, { work, env }, { includePartialMessages: true }),
        onPermission: (request) => {
          asked.push(request);
          return decide(request);
        },
      });
      const pid = session.pid;
      assert.ok(pid !== undefined && await processAlive(pid), "the CLI runs");

      await t.step("two turns on one process: same session id, same pid", async () => {
        const first = await session.send("hello one", TURN);
        assert.equal(first.result.text, "Echo: hello one");
        assert.equal(first.result.isError, false);
        assert.equal(first.result.subtype, "success");
        assert.match(session.sessionId ?? "", /^[0-9a-f-]{36}$/);
        assert.equal(first.result.sessionId, session.sessionId);
        assert.ok(first.events.some((e) => e.type === "system"), "system/init is in the turn");
        assert.ok(first.events.some((e) => e.type === "assistant"));
        const sessionId = session.sessionId;

        const second = await session.send("hello two", TURN);
        assert.equal(second.result.text, "Echo: hello two");
        assert.equal(second.result.sessionId, sessionId);
        assert.equal(session.sessionId, sessionId);
        assert.equal(session.pid, pid);
        assert.ok(await processAlive(pid));
        assert.ok(second.result.totalCostUsd >= first.result.totalCostUsd);
        // What reached the model: both prompts, the second with the first exchange as history.
        const request = await api.waitForRequest((r) => r.prompt === "hello two");
        assert.ok(JSON.stringify(request.body).includes("Echo: hello one"));
        assert.ok(api.messageRequests.some((r) => r.prompt === "hello one"));
      });

      await t.step("a tool call allowed (plain allow)", async () => {
        decide = () => allow();
        asked.length = 0;
        const turn = await session.send(
          "[[tool:bash:touch allowed.txt && echo allowed-ran]]",
          TURN,
        );
        assert.equal(turn.result.text, "Tool said: allowed-ran");
        assert.equal(turn.result.isError, false);
        assert.equal(asked.length, 1);
        assert.equal(asked[0]?.toolName, "Bash");
        assert.equal(asked[0]?.input.command, "touch allowed.txt && echo allowed-ran");
        assert.ok(turn.events.some((e) => e.type === "permission_request"));
        assert.ok(await exists(`${work}/allowed.txt`), "the tool ran");
        const followUp = await api.waitForRequest((r) =>
          r.toolResults.some((x) => x.content === "allowed-ran")
        );
        assert.equal(followUp.toolResults[0]?.isError, false);
      });

      await t.step(
        "allowed with a rewritten updatedInput: the rewritten command runs",
        async () => {
          decide = (request) =>
            allow({ ...request.input, command: "touch rewritten.txt && echo rewritten-ran" });
          const turn = await session.send(
            "[[tool:bash:touch original.txt && echo original-ran]]",
            TURN,
          );
          assert.equal(turn.result.text, "Tool said: rewritten-ran");
          assert.ok(await exists(`${work}/rewritten.txt`), "the rewritten command ran");
          assert.ok(!(await exists(`${work}/original.txt`)), "the original command did not run");
          await api.waitForRequest((r) => r.toolResults.some((x) => x.content === "rewritten-ran"));
          assert.ok(
            !api.requests.some((r) => r.toolResults.some((x) => x.content === "original-ran")),
          );
        },
      );

      await t.step("denied with a reason: the reason reaches the model", async () => {
        decide = () => deny("Denied by the e2e host: no touching");
        const turn = await session.send("[[tool:bash:touch denied.txt && echo denied-ran]]", TURN);
        assert.equal(turn.result.isError, false);
        assert.equal(turn.result.text, "Tool failed: Denied by the e2e host: no touching");
        assert.equal(turn.result.permissionDenials.length, 1);
        assert.ok(!(await exists(`${work}/denied.txt`)));
        const followUp = await api.waitForRequest((r) =>
          r.toolResults.some((x) => x.content === "Denied by the e2e host: no touching")
        );
        assert.equal(followUp.toolResults[0]?.isError, true);
      });

      await t.step("denied with interrupt: the turn ends in error, the next works", async () => {
        decide = () => deny("Stop right there", { interrupt: true });
        const before = api.messageRequests.length;
        const turn = await session.send(
          "[[tool:bash:touch stopped.txt && echo stopped-ran]]",
          TURN,
        );
        assert.equal(turn.result.isError, true);
        assert.equal(turn.result.subtype, "error_during_execution");
        assert.equal(turn.result.terminalReason, "aborted_tools");
        assert.ok(!(await exists(`${work}/stopped.txt`)));
        // The model was not called again within the interrupted turn.
        assert.equal(requestsSince(api, before).length, 1);

        decide = () => deny("No decision was scripted for this step");
        const next = await session.send("after deny-interrupt", TURN);
        assert.equal(next.result.text, "Echo: after deny-interrupt");
        assert.equal(next.result.isError, false);
        const request = await api.waitForRequest((r) => r.prompt === "after deny-interrupt");
        assert.equal(request.toolResults[0]?.isError, true, "the rejected tool_result went along");
      });

      await t.step("a deferred permission answered from another task", async () => {
        decide = () => defer();
        using sub = session.subscribe({ capacity: 256 });
        const answered = (async () => {
          const event = await nextEvent(sub, (e) => e.type === "permission_request");
          assert.equal(event.type, "permission_request");
          const request = (event as { request: PermissionRequest }).request;
          await new Promise((resolve) => setTimeout(resolve, 50));
          assert.equal(session.pendingPermissions.length, 1);
          return await session.respondToPermission(request.requestId, allow());
        })();
        const [turn, responded] = await Promise.all([
          session.send("[[tool:bash:touch deferred.txt && echo deferred-ran]]", TURN),
          answered,
        ]);
        assert.equal(responded, true);
        assert.equal(turn.result.text, "Tool said: deferred-ran");
        assert.ok(await exists(`${work}/deferred.txt`));
        assert.equal(session.pendingPermissions.length, 0);
        await api.waitForRequest((r) => r.toolResults.some((x) => x.content === "deferred-ran"));
      });

      await t.step("partial messages arrive as stream_event on a subscription", async () => {
        using sub = session.subscribe({ capacity: 512 });
        const turn = await session.send("[[slow]] stream me", { ...TURN, collectEvents: "all" });
        assert.equal(turn.result.text, "Echo: [[slow]] stream me");
        const seen: SessionEvent[] = [];
        for (;;) {
          const event = await nextEvent(sub, () => true);
          seen.push(event);
          if (event.type === "result") break;
        }
        const deltas = seen.filter(isTextDelta);
        assert.ok(deltas.length >= 5, `expected several text deltas, saw ${deltas.length}`);
        assert.equal(deltas.map(deltaText).join(""), "Echo: [[slow]] stream me");
        assert.equal(turn.events.filter(isTextDelta).length, deltas.length);
        assert.ok(!seen.some((e) => e.type === "lagged"));
      });

      await t.step("abort mid-stream through the send signal; the next turn works", async () => {
        using sub = session.subscribe({ capacity: 512 });
        const controller = new AbortController();
        const reason = new Error("The e2e user cancelled");
        const sending = session.send("please [[stall]]", { ...TURN, signal: controller.signal });
        const rejected = assert.rejects(sending, (error) => error === reason);
        await nextEvent(sub, isTextDelta);
        assert.equal(api.openStreams, 1, "the API stream is stalled");
        controller.abort(reason);
        await rejected;
        const result = await nextEvent(sub, (e) => e.type === "result");
        assert.equal((result as { subtype?: string }).subtype, "error_during_execution");
        // The CLI aborted the HTTP request: the stalled stream is gone.
        await api.waitForStreamsClosed({ timeoutMs: 5_000 });

        const next = await session.send("after abort", TURN);
        assert.equal(next.result.text, "Echo: after abort");
        assert.equal(session.pid, pid);
      });

      await t.step("an API error (HTTP 500) is an error result; the next turn works", async () => {
        const turn = await session.send("boom [[error:500]]", TURN);
        assert.equal(turn.result.isError, true);
        assert.equal(turn.result.subtype, "success", "API errors keep subtype success");
        assert.equal(turn.result.apiErrorStatus, 500);
        // CLAUDE_CODE_MAX_RETRIES=1: the first call and one retry reached the API.
        assert.equal(
          api.messageRequests.filter((r) => r.prompt === "boom [[error:500]]").length,
          2,
        );
        const next = await session.send("after the error", TURN);
        assert.equal(next.result.text, "Echo: after the error");
      });

      await t.step("close ends the CLI", async () => {
        const status = await session.close();
        assert.equal(status.state, "completed");
        assert.equal(session.alive, false);
        await waitUntil(async () => !(await processAlive(pid)), "the CLI process gone", 5_000);
      });
    });
  },
);

e2eTest("DuplexSession + subprocess: the CLI killed from outside mid-turn", async (_t, cli) => {
  await withSandbox(async ({ api, work, env }) => {
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }, { includePartialMessages: true }),
    });
    const pid = session.pid;
    assert.ok(pid !== undefined);
    using sub = session.subscribe({ capacity: 512 });
    const sending = session.send("please [[stall]]", TURN);
    const rejected = assert.rejects(sending, (error) => {
      assert.ok(isDuplexError(error, "process_exited"), `got ${error}`);
      return true;
    });
    await nextEvent(sub, isTextDelta);
    Deno.kill(pid, "SIGKILL");
    await rejected;
    const status = await session.waitForExit({ timeoutMs: 5_000 });
    assert.equal(status.state, "failed");
    assert.ok(status.state === "failed" && status.signal === "SIGKILL", JSON.stringify(status));
    assert.equal(session.alive, false);
    assert.equal((await session.close()).state, "failed", "close after the end keeps the status");
    await api.waitForStreamsClosed({ timeoutMs: 5_000 });
    await assert.rejects(session.send("anyone?", TURN), (error) => isDuplexError(error));
  });
});

/*
 * Observed with 2.1.332: a Bash tool command's background process
 * (`nohup sleep 300 &`) is reparented to PID 1 as soon as the tool's shell
 * exits (before the tool result is even sent), in the session of that dead
 * shell. Neither the CLI's exit on stdin EOF nor its exit on SIGTERM ends it,
 * and at close time it is no descendant of the CLI any more: only something
 * recorded at spawn time finds it (it inherits the CLI's environment, so a
 * marker variable in /proc/<pid>/environ does).
 */
e2eTest("DuplexSession + subprocess: close leaves no process behind", async (_t, cli) => {
  await withSandbox(async ({ work, env }) => {
    let grandchild: number | undefined;
    try {
      await using session = await DuplexSession.start({
        transport: sandboxedCli(cli, { work, env }),
        onPermission: () => allow(),
      });
      const pid = session.pid;
      assert.ok(pid !== undefined);
      const turn = await session.send(
        "[[tool:bash:nohup sleep 300 >/dev/null 2>&1 & echo $!]]",
        TURN,
      );
      const match = /^Tool said: (\d+)$/.exec(turn.result.text);
      assert.ok(match, `unexpected result: ${turn.result.text}`);
      grandchild = Number(match[1]);
      assert.ok(await processAlive(grandchild), "the background grandchild runs");
      await session.close();
      await waitUntil(async () => !(await processAlive(pid)), "the CLI process gone", 5_000);
      await waitUntil(
        async () => !(await processAlive(grandchild!)),
        `the background grandchild ${grandchild} gone`,
        5_000,
      );
    } finally {
      // Never leave the sleeper behind, even when the assertion failed.
      if (grandchild !== undefined && await processAlive(grandchild)) {
        try {
          Deno.kill(grandchild, "SIGKILL");
        } catch {
          // Gone meanwhile.
        }
      }
    }
  });
});
