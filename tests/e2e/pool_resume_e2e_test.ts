/**
 * `SessionPool` hibernation and resume on the real `claude` 2.1.332 and the
 * fake Messages API: a conversation hibernated to make room (`maxLive: 1`)
 * or after `idleMs`, one whose process was killed, and each resumed by the
 * next `acquire` in a new process with the same session id, the model seeing
 * its own history and not another conversation's (the fake API's request
 * log). And resumes that cannot work: an unknown session id, a transcript
 * deleted while hibernated (`not_found` with the CLI's words, quickly),
 * after which `forget` lets the key start over.
 *
 * @module
 */

import assert from "node:assert/strict";
import { isDuplexError } from "../../mod.ts";
import { deleteSession } from "../../adapters/subprocess/history/mod.ts";
import { e2eTest, processAlive, waitUntil, withSandbox } from "./_harness.ts";
import { messagesOf, requestOf, TURN, withPool } from "./_pool_harness.ts";

/** What the CLI writes when it has no transcript for `--resume` (2.1.332). */
const NO_TRANSCRIPT = /No conversation found with session ID/;

e2eTest(
  "SessionPool: hibernated to make room and after idleMs, resumed with its own history",
  async (t, cli) => {
    await withSandbox(async (box) => {
      const idleMs = 1_000;
      // Each conversation in a folder of its own, claimed from a parked spare:
      // a resume must start where the transcript was written.
      const adaDir = `${box.root}/ada`;
      const bobDir = `${box.root}/bob`;
      await Deno.mkdir(adaDir);
      await Deno.mkdir(bobDir);
      await withPool(cli, box, { maxLive: 1, idleMs, parkedSpares: 1 }, async (p) => {
        let adaId = "";
        let bobId = "";
        let resumedPid = 0;
        await t.step(
          "B's acquire hibernates A; A comes back resumed, with A's history",
          async () => {
            await p.next("spare_ready", (e) => e.kind === "parked");
            const ada = await p.pool.acquire("ada", { cwd: adaDir });
            assert.equal((await p.next("started", (e) => e.key === "ada")).via, "parked");
            await ada.send("Remember: my name is Ada", TURN);
            adaId = ada.sessionId!;
            const adaPid = ada.pid!;
            p.pool.release("ada");

            const bob = await p.pool.acquire("bob", { cwd: bobDir });
            const hibernated = await p.next("hibernated", (e) => e.key === "ada");
            assert.deepEqual(hibernated, {
              type: "hibernated",
              key: "ada",
              sessionId: adaId,
              reason: "evicted",
            });
            assert.equal(await processAlive(adaPid), false, "A's process is gone before B starts");
            assert.equal(p.pool.peek("ada")?.state, "hibernated");
            await bob.send("Remember: my name is Bob", TURN);
            bobId = bob.sessionId!;
            p.pool.release("bob");

            const back = await p.pool.acquire("ada");
            await p.next("hibernated", (e) => e.key === "bob" && e.reason === "evicted");
            const started = await p.next("started", (e) => e.key === "ada" && e.via === "resumed");
            assert.equal(started.sessionId, adaId);
            const launched = p.launched.find((l) => l.pid === back.pid);
            assert.deepEqual(
              [launched?.resume, launched?.cwd],
              [adaId, adaDir],
              "--resume, in A's folder",
            );
            assert.notEqual(back.pid, adaPid, "in a new process");
            resumedPid = back.pid!;
            const turn = await back.send("What is my name?", TURN);
            assert.equal(turn.result.sessionId, adaId, "the same session id");
            assert.equal(back.sessionId, adaId);
            const seen = messagesOf(await requestOf(box.api, "What is my name?"));
            assert.match(seen, /Remember: my name is Ada/, "the model sees A's history");
            assert.doesNotMatch(seen, /Bob/, "and nothing of B's");
            p.pool.release("ada");
          },
        );

        await t.step("A idle for idleMs is hibernated, then resumed", async () => {
          const released = performance.now();
          const hibernated = await p.next("hibernated", (e) => e.key === "ada", 10_000);
          const after = performance.now() - released;
          assert.equal(hibernated.reason, "idle");
          assert.ok(after >= idleMs - 50, `hibernated after ${Math.round(after)} ms`);
          // The event comes as the close begins; the process ends soon after.
          await waitUntil(async () => !(await processAlive(resumedPid)), "its process end", 5_000);
          const again = await p.pool.acquire("ada");
          const turn = await again.send("What did I ask first?", TURN);
          assert.equal(turn.result.sessionId, adaId);
          const seen = messagesOf(await requestOf(box.api, "What did I ask first?"));
          assert.match(seen, /Remember: my name is Ada[\s\S]*What is my name\?/);
          p.pool.release("ada");
          const health = p.pool.health;
          assert.deepEqual(
            [
              health.handouts.parked,
              health.handouts.resumed,
              health.hibernations,
              health.evictions,
            ],
            [2, 2, 3, 2],
          );
        });

        await t.step(
          "B's transcript deleted while hibernated: not_found, forget starts it new",
          async () => {
            await deleteSession(bobId, { configDir: `${box.home}/.claude` });
            const began = performance.now();
            const error = await p.pool.acquire("bob").catch((e: unknown) => e);
            const took = performance.now() - began;
            assert.ok(isDuplexError(error, "not_found"), String(error));
            assert.match(error.message, NO_TRANSCRIPT, "the CLI's words are in the message");
            assert.ok(error.message.includes(bobId));
            assert.ok(error.exit && !error.exit.requested, "the CLI's own exit is attached");
            assert.ok(took < 10_000, `failed after ${Math.round(took)} ms`);
            await p.next("start_failed", (e) => e.key === "bob");
            await p.pool.forget("bob");
            const fresh = await p.pool.acquire("bob");
            const turn = await fresh.send("Who am I?", TURN);
            assert.notEqual(turn.result.sessionId, bobId, "a new session");
            assert.doesNotMatch(messagesOf(await requestOf(box.api, "Who am I?")), /Bob/);
            p.pool.release("bob");
          },
        );
      });
    });
  },
);

e2eTest(
  "SessionPool: a killed CLI is reported crashed and resumed by the next acquire; unknown resume",
  async (t, cli) => {
    await withSandbox(async (box) => {
      await withPool(cli, box, { startTimeoutMs: 30_000 }, async (p) => {
        await t.step(
          "SIGKILL of a live conversation's CLI, then a transparent resume",
          async () => {
            const session = await p.pool.acquire("kiwi");
            await session.send("Remember: the code word is kiwi", TURN);
            const id = session.sessionId!;
            const pid = session.pid!;
            p.pool.release("kiwi");
            Deno.kill(pid, "SIGKILL");
            const crashed = await p.next("crashed", (e) => e.key === "kiwi");
            assert.equal(crashed.sessionId, id);
            assert.equal(crashed.exit?.signal, "SIGKILL");
            assert.equal(crashed.exit?.requested, false);
            assert.equal(p.pool.peek("kiwi")?.state, "hibernated");
            assert.equal(p.pool.health.crashes, 1);

            const back = await p.pool.acquire("kiwi");
            const started = await p.next("started", (e) => e.key === "kiwi" && e.via === "resumed");
            assert.equal(started.sessionId, id);
            assert.notEqual(back.pid, pid);
            const turn = await back.send("What is the code word?", TURN);
            assert.equal(turn.result.sessionId, id, "the same session id");
            const seen = messagesOf(await requestOf(box.api, "What is the code word?"));
            assert.match(seen, /Remember: the code word is kiwi/, "the model sees the history");

            // Killed mid-turn, still held: the turn rejects, the holder's next acquire resumes.
            const slow = back.send("[[slow]] a turn cut short", TURN);
            await requestOf(box.api, "[[slow]] a turn cut short");
            Deno.kill(back.pid!, "SIGKILL");
            await assert.rejects(slow, (e) => isDuplexError(e, "process_exited"));
            await p.next("crashed", (e) => e.key === "kiwi");
            const third = await p.pool.acquire("kiwi");
            assert.equal(p.pool.peek("kiwi")?.holds, 2, "the holder held it throughout");
            await third.send("And now?", TURN);
            assert.equal(third.sessionId, id);
            assert.match(
              messagesOf(await requestOf(box.api, "And now?")),
              /the code word is kiwi[\s\S]*What is the code word\?/,
            );
            assert.equal(p.pool.health.crashes, 2);
            p.pool.release("kiwi");
            p.pool.release("kiwi");
          },
        );

        await t.step(
          "acquire with resume: an unknown uuid fails fast with the CLI's words",
          async () => {
            const ghost = crypto.randomUUID();
            const began = performance.now();
            const error = await p.pool.acquire("ghost", { resume: ghost }).catch((e: unknown) => e);
            const took = performance.now() - began;
            assert.ok(isDuplexError(error, "not_found"), String(error));
            assert.match(error.message, NO_TRANSCRIPT);
            assert.ok(error.message.includes(ghost));
            assert.equal(error.exit?.code, 1);
            assert.ok(
              took < 10_000,
              `failed after ${Math.round(took)} ms (not the 30 s start limit)`,
            );
            const failed = await p.next("start_failed", (e) => e.key === "ghost");
            assert.ok(isDuplexError(failed.error, "not_found"));
            assert.equal(p.pool.peek("ghost"), undefined, "a failed new key leaves nothing");
            assert.equal(p.pool.health.live, 1, "only kiwi's process is live");
          },
        );
      });
    }, { slowDelayMs: 1_000 });
  },
);
