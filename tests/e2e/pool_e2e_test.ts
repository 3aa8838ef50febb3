// deno-lint-ignore-file no-console -- the first turns' times are printed, not asserted
/**
 * `SessionPool` on the real `claude` 2.1.332 and the fake Messages API: how a
 * conversation gets its process (a warm spare, a parked spare claimed for
 * another folder, a claim the CLI refuses falling back to a cold start), and
 * a shutdown with every kind of process alive and a turn in flight. Every
 * process the pool launches is recorded (the pool's `launch` option), so the
 * tests know which process served what and that none is left.
 *
 * Hibernation, crashes and resume are in `pool_resume_e2e_test.ts`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { allow, isDuplexError, type SessionEvent } from "../../mod.ts";
import { e2eTest, exists, processAlive, waitUntil, withSandbox } from "./_harness.ts";
import { requestOf, TURN, withPool } from "./_pool_harness.ts";
import { assertNoneLeft, markerOf } from "./_ps.ts";

/**
 * A model one conversation asks for: an alias, since `set_model` with a name
 * the CLI does not know asks the API to validate it (the fake API cannot).
 */
const OTHER_MODEL = "haiku";
/** A model only the refusing folder's project settings name. */
const PROJECT_MODEL = "claude-project-settings-model";

function ms(since: number): number {
  return Math.round(performance.now() - since);
}

e2eTest(
  "SessionPool: a warm spare, a parked spare claimed for a folder, a refused claim falling back",
  async (t, cli) => {
    await withSandbox(async (box) => {
      const other = `${box.root}/other`;
      const refusing = `${box.root}/refusing`;
      await Deno.mkdir(other);
      await Deno.mkdir(`${refusing}/.claude`, { recursive: true });
      // Project settings a cold start applies while it starts: a claim cannot (SDK docs: env, model).
      await Deno.writeTextFile(
        `${refusing}/.claude/settings.json`,
        JSON.stringify({ model: PROJECT_MODEL }),
      );
      const asked: string[] = [];
      await withPool(cli, box, {
        spares: 1,
        parkedSpares: 1,
        onPermission: (_request, { key }) => {
          asked.push(key);
          return allow();
        },
      }, async (p) => {
        await t.step("a warm spare serves the first turn", async () => {
          await p.next("spare_ready", (e) => e.kind === "warm");
          const spare = p.launched.find((l) => !l.parked);
          assert.ok(spare, "a warm spare was launched");
          assert.equal(spare.cwd, box.work, "warm spares start in the pool's folder");
          const began = performance.now();
          const session = await p.pool.acquire("warm");
          const started = await p.next("started", (e) => e.key === "warm");
          assert.equal(started.via, "spare");
          assert.equal(session.pid, spare.pid, "the conversation runs in the spare's process");
          const turn = await session.send("hello from a spare", TURN);
          console.log(`    a spare's first turn: ${ms(began)} ms (acquire to result)`);
          assert.equal(turn.result.text, "Echo: hello from a spare");
          assert.equal(session.pid, spare.pid);
          p.pool.release("warm");
          assert.equal(p.pool.health.handouts.spare, 1);
          // The hand-out is replaced in the background by a new process.
          await p.next("spare_ready", (e) => e.kind === "warm");
          const warm = p.launched.filter((l) => !l.parked);
          assert.equal(warm.length, 2, "one replacement spare");
          // It serves a conversation with its own model (set after the hand-out).
          const other = await p.pool.acquire("warm-model", { model: OTHER_MODEL });
          assert.equal((await p.next("started", (e) => e.key === "warm-model")).via, "spare");
          assert.equal(other.pid, warm[1]!.pid);
          await other.send("hello with another model", TURN);
          const request = await requestOf(box.api, "hello with another model");
          assert.match(request.model ?? "", /haiku/, "set_model after the hand-out");
          const first = await requestOf(box.api, "hello from a spare");
          assert.doesNotMatch(first.model ?? "", /haiku/, "the spares' own model is another");
          p.pool.release("warm-model");
        });

        await t.step("a parked spare is claimed for another folder", async () => {
          await p.next("spare_ready", (e) => e.kind === "parked");
          const parked = p.launched.find((l) => l.parked);
          assert.ok(parked, "a parked spare was launched");
          assert.notEqual(parked.cwd, other, "it was parked elsewhere");
          const began = performance.now();
          const appendSystemPrompt = "The pool claimed this session for a folder.";
          const session = await p.pool.acquire("parked", { cwd: other, appendSystemPrompt });
          const started = await p.next("started", (e) => e.key === "parked");
          assert.equal(started.via, "parked");
          assert.equal(session.pid, parked.pid, "the conversation runs in the parked process");
          const prompt = "[[tool:bash:touch claimed.txt && pwd]]";
          const turn = await session.send(prompt, { ...TURN, collectEvents: true });
          console.log(`    a parked spare's first turn (a tool call): ${ms(began)} ms`);
          const real = await Deno.realPath(other);
          const init = turn.events.find((e: SessionEvent) =>
            e.type === "system" && e.subtype === "init"
          ) as { cwd?: string } | undefined;
          assert.ok(init, "the turn has a system/init frame");
          assert.equal(init.cwd, real, "the CLI reports the claimed folder");
          assert.equal(
            turn.result.text,
            `Tool said: ${real}`,
            "the tool ran in the claimed folder",
          );
          assert.ok(await exists(`${other}/claimed.txt`), "the tool wrote in the claimed folder");
          assert.deepEqual(asked, ["parked"], "the pool's handler was told the conversation");
          const request = await requestOf(box.api, prompt);
          const sent = JSON.stringify(request.body);
          assert.ok(
            sent.includes(`Primary working directory: ${real}\\n`),
            "the model was told the claimed folder",
          );
          assert.ok(!sent.includes(parked.cwd!), "nothing of the parking folder reached the model");
          assert.ok(sent.includes(appendSystemPrompt), "the claim carried the appended prompt");
          p.pool.release("parked");
        });

        await t.step("a refused claim falls back to a cold start", async () => {
          await p.next("spare_ready", (e) => e.kind === "parked"); // the replacement
          const spare = p.launched.findLast((l) => l.parked)!;
          const session = await p.pool.acquire("refused", { cwd: refusing });
          const refused = await p.next("claim_refused", (e) => e.key === "refused");
          assert.equal(refused.reason, "project_settings_not_claimable");
          assert.match(refused.message, /sets model/);
          const started = await p.next("started", (e) => e.key === "refused");
          assert.equal(started.via, "cold");
          assert.notEqual(session.pid, spare.pid);
          const cold = p.launched.find((l) => l.pid === session.pid);
          assert.ok(cold && !cold.parked && cold.cwd === refusing, "a cold start in the folder");
          const turn = await session.send("hello from a refusing folder", TURN);
          assert.equal(turn.result.text, "Echo: hello from a refusing folder");
          const request = await requestOf(box.api, "hello from a refusing folder");
          assert.equal(
            request.model,
            PROJECT_MODEL,
            "the cold start applied the folder's settings",
          );
          // A refused spare stays parked by itself: the pool must end it.
          await waitUntil(async () => !(await processAlive(spare.pid)), "the refused spare end");
          p.pool.release("refused");
          const health = p.pool.health;
          assert.deepEqual(health.handouts, { spare: 2, parked: 1, cold: 1, resumed: 0 });
          assert.equal(health.claimRefusals, 1);
          assert.equal(health.failures, 0);
        });
      });
    });
  },
);

e2eTest(
  "SessionPool: close() ends live, spare, parked and mid-turn processes, rejects waiting acquires",
  async (t, cli) => {
    await withSandbox(async (box) => {
      const options = { maxLive: 1, spares: 1, parkedSpares: 1, onPermission: () => allow() };
      await withPool(cli, box, options, async (p) => {
        // Ends with the pool (the last step asserts it), also when a step fails.
        const seen = (async () => {
          const types: string[] = [];
          for await (const event of p.pool.subscribe()) types.push(event.type);
          return types;
        })();
        const slow = "[[slow]] a long answer";
        let background = 0;
        let turn: Promise<unknown> | undefined;
        let waiting: Promise<unknown> | undefined;
        await t.step("a live conversation mid-turn, an acquire waiting, both spares", async () => {
          await p.next("spare_ready", (e) => e.kind === "warm");
          await p.next("spare_ready", (e) => e.kind === "parked");
          const live = await p.pool.acquire("live");
          // A tool leaves a process behind (reparented to init once its shell exits).
          const tool = await live.send(
            "[[tool:bash:echo start; sleep 300 >/dev/null 2>&1 & echo background=$!]]",
            TURN,
          );
          background = Number(/background=(\d+)/.exec(tool.result.text)?.[1]);
          assert.ok(background > 1 && await processAlive(background), tool.result.text);
          turn = live.send(slow, TURN);
          turn.catch(() => {});
          await requestOf(box.api, slow);
          assert.ok(live.busy, "the turn is in flight");
          waiting = p.pool.acquire("waiting", { timeoutMs: 15_000 }); // `timeout` if never closed
          waiting.catch(() => {});
          await p.next("waiting", (e) => e.key === "waiting");
          await p.next("spare_ready", (e) => e.kind === "warm"); // the hand-out's replacement
          const health = p.pool.health;
          assert.deepEqual(
            [health.live, health.busy, health.spares, health.parked, health.waiting],
            [1, 1, 1, 1, 1],
          );
        });

        await t.step("close() resolves, every process is gone, no orphan", async () => {
          const pids = p.launched.map((l) => l.pid);
          const alive = [];
          for (const pid of pids) if (await processAlive(pid)) alive.push(pid);
          assert.equal(alive.length, 3, "the conversation's, the spare's and the parked one's");
          const markers = await Promise.all(alive.map(markerOf));
          const parkDir = p.launched.find((l) => l.parked)!.cwd!;
          const began = performance.now();
          await p.pool.close();
          const took = ms(began);
          console.log(`    close() with 3 processes and a turn in flight: ${took} ms`);
          assert.ok(took < 10_000, `close() took ${took} ms`);
          await assert.rejects(waiting!, (e) => isDuplexError(e, "closed"));
          await assert.rejects(turn!, (e) => isDuplexError(e, "closed"), "the turn in flight ends");
          await assert.rejects(p.pool.acquire("late"), (e) => isDuplexError(e, "closed"));
          await assertNoneLeft([...pids, background], markers, "after close()");
          assert.equal(await exists(parkDir), false, "the pool's parking folder is removed");
          assert.equal((await seen).at(-1), "closed", "the subscription ends after `closed`");
        });
      });
    }, { slowDelayMs: 1_000 });
  },
);
