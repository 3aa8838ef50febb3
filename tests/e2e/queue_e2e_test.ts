/**
 * Queued prompts against the real `claude` 2.1.332: sends written while a
 * turn runs, priorities, `shouldQuery: false`, withdrawing a queued line with
 * its signal, and `interrupt({ cancelQueued })`. What reached the model is
 * read from the fake API's request log.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession, isDuplexError, type SessionEvent } from "../../mod.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";
import { type FakeApi, lastUserBlocks } from "./fake_api.ts";

const TURN = { timeoutMs: 30_000 } as const;

/** The user texts of the last message of each Messages request since `from`, joined. */
function asked(api: FakeApi, from: number): string[] {
  return api.messageRequests.slice(from).map((request) => {
    return (lastUserBlocks(request.body) as { text?: unknown }[])
      .flatMap((part) =>
        typeof part?.text === "string" && !part.text.includes("<system-reminder>")
          ? [part.text]
          : []
      )
      .join("|");
  });
}

e2eTest(
  "queued prompts: batching, priorities, shouldQuery, withdrawal, cancelQueued",
  async (t, cli) => {
    await withSandbox(async ({ api, work, env }) => {
      await using session = await DuplexSession.start({
        transport: sandboxedCli(cli, { work, env }),
        queue: true,
      });
      const events: SessionEvent[] = [];
      const sub = session.subscribe({ capacity: 4096 });
      const reading = (async () => {
        for await (const event of sub) events.push(event);
      })();
      await session.send("warm up", TURN);

      await t.step("lines queued together run as one turn; each send gets it", async () => {
        const from = api.messageRequests.length;
        const mark = events.length;
        const first = session.send("[[slow]] first", TURN);
        await until(() => since(events, mark, "turn_started") >= 1);
        const second = session.send("second", TURN);
        const third = session.send("third", TURN);
        const [a, b, c] = await Promise.all([first, second, third]);
        assert.match(a.result.text, /first/);
        assert.equal(b.result, c.result, "the batch's two sends share its result");
        assert.deepEqual(b.result.raw.user_message_uuids, [b.uuid, c.uuid]);
        assert.match(asked(api, from).at(-1) ?? "", /second[\s|]*third/);
        const queued = events.slice(mark).flatMap((e) => e.type === "turn_queued" ? [e.uuid] : []);
        assert.ok(queued.includes(b.uuid) && queued.includes(c.uuid));
      });

      await t.step('priority "next" runs before earlier "later" lines, each alone', async () => {
        const from = api.messageRequests.length;
        const mark = events.length;
        const first = session.send("[[slow]] busy", TURN);
        await until(() => since(events, mark, "turn_started") >= 1);
        const later = session.send("late one", { ...TURN, priority: "later" });
        const next = session.send("next one", { ...TURN, priority: "next" });
        await Promise.all([first, later, next]);
        const order = asked(api, from).slice(1);
        assert.deepEqual(order, ["next one", "late one"]);
      });

      await t.step('priority "now" cancels the running turn and runs at once', async () => {
        const from = api.messageRequests.length;
        const first = session.send("[[stall]] never ends", TURN);
        // The model is being asked: the CLI has taken the line up as its turn.
        // (A turn_started alone is too early under load: 2.1.289 then batched
        // "urgent" with the line still in its queue, and nothing was cut.)
        await api.waitForRequest((request) =>
          request.reply === "stall" && api.messageRequests.indexOf(request) >= from
        );
        const now = await session.send("urgent", { ...TURN, priority: "now" });
        assert.match(now.result.text, /urgent/);
        const cut = await first;
        // Cut mid-stream. Its `is_error` is the CLI's call: false when it had streamed text
        // already (seen 1 run in 75 on 2.1.332: `subtype: "success"`, the partial text).
        assert.equal(cut.result.terminalReason, "aborted_streaming", "the running turn was cut");
      });

      await t.step("verbatim: a slash command is sent as text, not run", async () => {
        const from = api.messageRequests.length;
        const run = await session.send("/cost", TURN);
        // "Total cost:" before 2.1.326 (CLI_CHANGES.estimatedCost).
        assert.match(run.result.text, /(Estimated|Total) cost:/, "run by the CLI itself");
        assert.equal(api.messageRequests.length, from, "no API request for a slash command");
        const text = await session.send("/cost", { ...TURN, verbatim: true });
        assert.equal(text.result.text, "Echo: /cost");
        assert.equal(api.messageRequests.length, from + 1);
      });

      await t.step("shouldQuery: false appends without asking the model", async () => {
        const from = api.messageRequests.length;
        const quiet = await session.send("remember the word kumquat", {
          ...TURN,
          shouldQuery: false,
        });
        assert.equal(quiet.result.text, "");
        assert.equal(api.messageRequests.length, from, "no API request for it");
        await session.send("what word?", TURN);
        assert.match(asked(api, from).at(-1) ?? "", /kumquat[\s\S]*what word/);
      });

      await t.step(
        "a queued send's signal withdraws its line; the running turn goes on",
        async () => {
          const from = api.messageRequests.length;
          const first = session.send("[[slow]] keeps going", TURN);
          const controller = new AbortController();
          const reason = new Error("withdrawn");
          const mark = events.length;
          const withdrawn = session.send("never asked", { ...TURN, signal: controller.signal });
          await until(() => since(events, mark, "turn_queued") >= 1);
          controller.abort(reason);
          await assert.rejects(withdrawn, (e) => e === reason);
          assert.match((await first).result.text, /keeps going/);
          assert.ok(!asked(api, from).some((text) => text.includes("never asked")));
        },
      );

      await t.step("interrupt({ cancelQueued: true }) cancels the queued lines", async () => {
        const from = api.messageRequests.length;
        const mark = events.length;
        const first = session.send("[[stall]] stuck", TURN);
        const second = session.send("dropped one", TURN);
        const third = session.send("dropped two", TURN);
        const outcomes = Promise.allSettled([second, third]);
        await until(() => since(events, mark, "turn_queued") >= 2);
        const receipt = await session.interrupt({ cancelQueued: true });
        assert.equal(receipt.cancelled.length, 2);
        for (const outcome of await outcomes) {
          assert.ok(outcome.status === "rejected" && isDuplexError(outcome.reason, "aborted"));
        }
        assert.equal((await first).result.isError, true);
        assert.ok(!asked(api, from).some((text) => text.includes("dropped")));
        assert.equal(session.busy, false);
        assert.match((await session.send("still here", TURN)).result.text, /still here/);
      });

      await session.close();
      await reading;
    });
  },
);

function since(events: readonly SessionEvent[], mark: number, type: string): number {
  return events.slice(mark).filter((event) => event.type === type).length;
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Cannot see the condition within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
