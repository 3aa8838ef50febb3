/**
 * The official SDK's user message fields (`send` options) and its options
 * that travel in `initialize` (typed start options), with the real `claude`
 * 2.1.332 against the fake API: what the CLI accepts, and what it does with
 * each where that shows (the model's request, the replayed user line, the
 * transcript, the tasks an interrupt stops).
 *
 * Observed on 2.1.332: `origin` is recorded in the transcript and echoed on
 * the replayed line (a `"peer"` origin from the host is dropped); `timestamp` becomes the transcript's `sentAtMs` (its
 * `timestamp` stays the time the CLI read the line); each `pasted_content`
 * entry is appended to the prompt in `<pasted_content id="…">` tags
 * (2.1.289 to 2.1.317: each on a line of its own, no tags, and no `sentAtMs`);
 * `inline_pastes` leaves a prompt that holds the paste unchanged;
 * `isSynthetic` prefixes the prompt with `[MESSAGE FROM NON-USER SOURCE - NOT
 * USER INPUT]`, records it as a meta entry of origin `unclassified`, and is
 * not replayed. `toolAliases` runs the aliased tool; `planModeInstructions`
 * is the "Plan Workflow" section of plan mode's reminder; without
 * `perTaskStopAffordance` an interrupt kills a background agent, with it the
 * agent keeps running until `stopTask()`. `agentProgressSummaries` and
 * `supportedDialogKinds` are accepted (their effects need a sub-agent running
 * for 30 s, or a model refusal, which the fake API does not produce).
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  DuplexSession,
  type DuplexSessionOptions,
  type SendOptions,
  type SessionEvent,
  type Subscription,
} from "../../mod.ts";
import type { SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import {
  cliAtLeast,
  e2eTest,
  type Sandbox,
  sandboxedCli,
  waitUntil,
  withSandbox,
} from "./_harness.ts";
import { lastUserBlocks, toolResultsOf } from "./fake_api.ts";
import { eventsUntil } from "../session/_helpers.ts";

const TIMEOUT = { timeoutMs: 30_000 };

/** The user entries of every transcript the CLI wrote under `home`. */
async function transcriptUsers(home: string): Promise<Record<string, unknown>[]> {
  const entries: Record<string, unknown>[] = [];
  const projects = `${home}/.claude/projects`;
  for await (const project of Deno.readDir(projects)) {
    for await (const file of Deno.readDir(`${projects}/${project.name}`)) {
      if (!file.name.endsWith(".jsonl")) continue;
      const text = await Deno.readTextFile(`${projects}/${project.name}/${file.name}`);
      for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        const entry = JSON.parse(line);
        if (entry.type === "user") entries.push(entry);
      }
    }
  }
  return entries;
}

/** The text of the last user message the model was sent. */
function promptText(sandbox: Sandbox): string {
  const blocks = lastUserBlocks(sandbox.api.messageRequests.at(-1)?.body) as { text?: string }[];
  return blocks.map((block) => block.text ?? "").join("\n");
}

/** Sends one turn with `options` on a fresh session that replays user lines. */
function sendOnce(cli: string, text: string, options: SendOptions) {
  return withSandbox(async (sandbox) => {
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, sandbox, { replayUserMessages: true }),
    });
    const turn = await session.send(text, { ...TIMEOUT, ...options, collectEvents: true });
    const replayed = turn.events.filter((e) => e.type === "user" && e.isReplay === true);
    await session.close();
    return { prompt: promptText(sandbox), replayed, entries: await transcriptUsers(sandbox.home) };
  });
}

e2eTest("send: origin, timestamp, pastes and isSynthetic reach the real CLI", async (t, cli) => {
  await t.step("origin, timestamp and pasted content", async () => {
    const timestamp = "2020-01-02T03:04:05.000Z";
    const { prompt, replayed, entries } = await sendOnce(cli, "typed words", {
      origin: { kind: "human" },
      timestamp,
      pastedContent: ["PASTE ONE", [{ type: "text", text: "PASTE TWO" }]],
    });
    // 2.1.332 wraps each paste in tags and records sentAtMs; 2.1.289 to 2.1.317 append each
    // paste on a line of its own and record no sentAtMs (measured).
    const tags = cliAtLeast("2.1.332");
    const paste = (text: string) =>
      tags ? `<pasted_content id="\\w+">\\s*${text}\\s*</pasted_content id="\\w+">` : text;
    assert.match(
      prompt,
      new RegExp(`typed words\\s+${paste("PASTE ONE")}\\s+${paste("PASTE TWO")}`),
    );
    assert.equal(replayed.length, 1);
    assert.deepEqual((replayed[0] as { origin?: unknown }).origin, { kind: "human" });
    const entry = entries.find((e) => JSON.stringify(e.message).includes("typed words"));
    assert.ok(entry, "the line is in the transcript");
    assert.deepEqual(entry.origin, { kind: "human" });
    assert.equal(entry.sentAtMs, tags ? Date.parse(timestamp) : undefined);
    assert.notEqual(entry.timestamp, timestamp, "the transcript's timestamp is the CLI's");
  });
  await t.step("inline pastes: accepted, the prompt as typed", async () => {
    const { prompt, replayed } = await sendOnce(cli, "see the paste here", {
      inlinePastes: ["the paste"],
    });
    assert.match(prompt, /see the paste here/);
    assert.equal(replayed.length, 1);
  });
  await t.step("a peer origin from the host is dropped", async () => {
    const { replayed, entries } = await sendOnce(cli, "from a peer", {
      origin: { kind: "peer", from: "other-session", name: "Other" },
    });
    assert.equal("origin" in replayed[0]!, false);
    const entry = entries.find((e) => JSON.stringify(e.message).includes("from a peer"));
    assert.ok(entry);
    assert.equal("origin" in entry, false);
  });
  await t.step("isSynthetic: marked for the model, a meta entry, not replayed", async () => {
    const { prompt, replayed, entries } = await sendOnce(cli, "from a program", {
      isSynthetic: true,
      origin: { kind: "human" },
    });
    assert.match(prompt, /\[MESSAGE FROM NON-USER SOURCE - NOT USER INPUT\]\s*from a program/);
    assert.equal(replayed.length, 0);
    const entry = entries.find((e) => JSON.stringify(e.message).includes("from a program"));
    assert.equal(entry?.isMeta, true);
    assert.deepEqual(entry?.origin, { kind: "unclassified" }, "isSynthetic overrides origin");
  });
});

/** Runs `fn` on a session started with `options` in a fresh sandbox. */
function withSession<T>(
  cli: string,
  options: Omit<DuplexSessionOptions, "transport">,
  fn: (session: DuplexSession, sandbox: Sandbox) => Promise<T>,
  subprocessOptions: SubprocessOptions = {},
): Promise<T> {
  return withSandbox(async (sandbox) => {
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, sandbox, subprocessOptions),
      onPermission: () => ({ behavior: "allow" }),
      ...options,
    });
    return await fn(session, sandbox);
  });
}

/** Reads events (the subscription stays open) until one matches; bounded. */
async function until(
  events: Subscription<SessionEvent>,
  match: (event: SessionEvent) => boolean,
): Promise<SessionEvent> {
  return (await eventsUntil(events, match, 15_000)).at(-1)!;
}

/** The fake API's trigger for a background sub-agent whose own request stalls. */
// The sub-agent's prompt is escaped in the JSON so that only its request stalls, not the main one.
const BACKGROUND_AGENT = '[[tool:Agent:{"description":"stalled helper",' +
  '"prompt":"\\u005b\\u005bstall]] please","subagent_type":"general-purpose",' +
  '"run_in_background":true}]]';

e2eTest("initialize options: the real CLI takes each, and it shows", async (t, cli) => {
  await t.step("all of them at once: initialize succeeds and a turn runs", async () => {
    await withSession(cli, {
      toolAliases: { Shell: "Bash" },
      planModeInstructions: "Read, then plan.",
      agentProgressSummaries: true,
      supportedDialogKinds: ["refusal_fallback_prompt"],
      perTaskStopAffordance: true,
      onUserDialog: () => ({ behavior: "cancelled" }),
    }, async (session) => {
      assert.ok(await session.initialized, "the CLI answered initialize");
      assert.equal((await session.send("hello", TIMEOUT)).result.text, "Echo: hello");
    });
  });
  await t.step("toolAliases: the model's call of the alias runs the tool", async () => {
    const call = '[[tool:Shell:{"command":"echo aliased"}]]';
    const run = (toolAliases?: Record<string, string>) =>
      withSession(cli, toolAliases ? { toolAliases } : {}, async (session, { api }) => {
        await session.send(call, TIMEOUT);
        return api.messageRequests.flatMap((request) => toolResultsOf(request.body));
      });
    const [plain] = await run();
    assert.equal(plain?.isError, true);
    assert.match(plain?.content ?? "", /No such tool available: Shell/);
    const [aliased] = await run({ Shell: "Bash" });
    assert.deepEqual([aliased?.isError, aliased?.content], [false, "aliased"]);
  });
  await t.step("planModeInstructions: plan mode's workflow section", async () => {
    const body = await withSession(
      cli,
      { planModeInstructions: "ZEBRA-WORKFLOW: read, then plan." },
      async (session, { api }) => {
        await session.send("plan something", TIMEOUT);
        return JSON.stringify(api.messageRequests.at(-1)?.body);
      },
      { permissionMode: "plan" },
    );
    assert.match(body, /## Plan Workflow\\n\\nZEBRA-WORKFLOW: read, then plan\./);
  });
  await t.step("perTaskStopAffordance: an interrupt spares a background agent", async () => {
    const run = (perTaskStopAffordance: boolean) =>
      withSession(cli, { perTaskStopAffordance }, async (session, { api }) => {
        const events = session.subscribe();
        const started = until(events, (e) => e.type === "system" && e.subtype === "task_started");
        await session.send(BACKGROUND_AGENT, TIMEOUT);
        const task = await started;
        const taskId = (task as { task_id: string }).task_id;
        await waitUntil(() => api.openStreams > 0, "the agent's stalled request");
        const ended = until(
          events,
          (e) => e.type === "system" && e.subtype === "task_notification" && e.task_id === taskId,
        );
        await session.interrupt();
        if (perTaskStopAffordance) {
          // Still running: its request still streams. Stopping it is up to the UI.
          await new Promise((resolve) => setTimeout(resolve, 1000));
          assert.ok(api.openStreams > 0, "the agent's request still streams");
          await session.stopTask(taskId);
        }
        const notification = await ended;
        events.return();
        return (notification as { status: string }).status;
      });
    assert.equal(await run(false), "stopped", "the interrupt stopped the agent");
    assert.equal(await run(true), "stopped", "stopTask() stopped the agent the interrupt spared");
  });
});
