/**
 * Cloudflare Workers: the example worker (`examples/edge/workerd/`), bundled
 * with `deno bundle` and run by the real `workerd` (from npm) with the
 * config the example ships, drives the real CLI through a relay. Its fetch
 * handler streams the assistant's text as it arrives, decides permissions
 * by its own policy, and interrupts the turn when the HTTP client leaves; its
 * Durable Object holds one session (one `claude`) across requests.
 */
import assert from "node:assert/strict";
import { waitUntil } from "../_harness.ts";
import { Child, processesWith } from "./_processes.ts";
import {
  bundle,
  freePort,
  interrupted,
  projectPath,
  type RelayFixture,
  runtimeTest,
  tempDir,
  withRelay,
} from "./_runtimes.ts";
import { readTurn, readUntilSilent } from "./_sse.ts";

/** Starts workerd on a free port with the example's config; retries a port taken meanwhile. */
async function startWorkerd(
  workerd: string,
  dir: string,
  { relay, token }: RelayFixture,
): Promise<{ child: Child; base: string }> {
  for (let attempt = 1;; attempt++) {
    const port = freePort();
    const child = await Child.spawn(workerd, {
      args: ["serve", "config.capnp", "--socket-addr", `http=127.0.0.1:${port}`],
      cwd: dir,
      env: { DUPLEX_RELAY_URL: relay.url, DUPLEX_RELAY_TOKEN: token },
    });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitUntil(
        async () => {
          if (child.exited) throw new Error("workerd exited");
          try {
            return (await (await fetch(`${base}/health`)).text()) === "ok\n";
          } catch {
            return false; // not listening yet
          }
        },
        `workerd answering on ${base}`,
        15_000,
      );
      return { child, base };
    } catch (error) {
      await child.stop();
      if (attempt >= 3 || !/Address already in use/.test(child.stderr)) {
        throw new Error(`Cannot start workerd: ${error}; ${child.describe()}`);
      }
    }
  }
}

/** Bundles `entry` as `worker.js` beside a copy of the example's config, in `dir`. */
async function prepare(entry: string, dir: string): Promise<void> {
  await bundle(entry, `${dir}/worker.js`);
  await Deno.copyFile(projectPath("examples/edge/workerd/config.capnp"), `${dir}/config.capnp`);
}

function post(url: string, prompt: string, signal = AbortSignal.timeout(30_000)) {
  return fetch(url, { method: "POST", body: prompt, signal });
}

runtimeTest(
  "workerd: the example worker streams turns, applies its policy, stops when the client leaves",
  ["workerd"],
  async (t, cli, bin) => {
    await withRelay(cli, async (fixture) => {
      const { relay, sandbox: { api, work, home } } = fixture;
      await using dir = await tempDir();
      await prepare("examples/edge/workerd/worker.ts", dir.path);
      const { child, base } = await startWorkerd(bin.workerd!, dir.path, fixture);
      await using _workerd = child;

      await t.step("a request's turn streams the assistant's text as it arrives", async () => {
        const seen: number[] = [];
        const response = await post(`${base}/turn`, "[[slow]] from workerd");
        assert.equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
        const turn = await readTurn(response.body!, () => seen.push(api.openStreams));
        assert.equal(turn.error, undefined, JSON.stringify(turn.error));
        assert.equal(turn.result?.text, "Echo: [[slow]] from workerd");
        assert.equal(turn.texts.join(""), turn.result?.text);
        assert.ok(turn.texts.length >= 3, `${turn.texts.length} text events`);
        assert.equal(seen[0], 1, "the first text came while the model was still streaming");
        await waitUntil(() => relay.sessionCount === 0, "the request's session closed");
      });

      await t.step("the worker's policy allows Write of a .txt file and denies Bash", async () => {
        const file = `${work}/edge.txt`;
        const allowed = await readTurn(
          (await post(`${base}/turn`, `[[tool:write:${file}:written at the edge]]`)).body!,
        );
        assert.deepEqual(allowed.permissions, [{ toolName: "Write", behavior: "allow" }]);
        assert.match(String(allowed.result?.text), /^Tool said: File created successfully/);
        assert.equal(await Deno.readTextFile(file), "written at the edge");

        const denied = await readTurn(
          (await post(`${base}/turn`, `[[tool:bash:rm -f ${file}]]`)).body!,
        );
        assert.deepEqual(denied.permissions, [{ toolName: "Bash", behavior: "deny" }]);
        const denials = denied.result?.permissionDenials as { tool_name: string }[];
        assert.deepEqual(denials.map((denial) => denial.tool_name), ["Bash"]);
        const reason = "The worker's policy allows only Write to .txt files, not Bash";
        assert.equal(denied.result?.text, `Tool failed: ${reason}`);
        const toolResult = api.messageRequests.at(-1)?.toolResults[0];
        assert.equal(toolResult?.isError, true);
        assert.match(String(toolResult?.content), new RegExp(reason));
        assert.equal(await Deno.readTextFile(file), "written at the edge", "rm never ran");
      });

      await t.step("the HTTP client leaving interrupts the turn (request.signal)", async () => {
        const prompt = "[[stall]] workerd waits";
        const leave = new AbortController();
        const response = await post(`${base}/turn`, prompt, leave.signal);
        await readUntilSilent(response.body!);
        leave.abort();
        await api.waitForStreamsClosed({ timeoutMs: 10_000 }); // the CLI aborted its request
        await waitUntil(() => relay.sessionCount === 0, "the worker closing its session");
        assert.equal(await interrupted(home, prompt), true, "the CLI recorded an interrupt");
      });

      await t.step(
        "a Durable Object holds one session: one claude serves three requests",
        async () => {
          const url = `${base}/conversations/alice/turn`;
          const results: Record<string, unknown>[] = [];
          const pids: number[][] = [];
          for (const prompt of ["one", "two", "three"]) {
            const turn = await readTurn((await post(url, prompt)).body!);
            assert.equal(turn.error, undefined, JSON.stringify(turn.error));
            results.push(turn.result!);
            pids.push(await processesWith(cli, true));
          }
          assert.deepEqual(results.map((result) => result.text), [
            "Echo: one",
            "Echo: two",
            "Echo: three",
          ]);
          assert.equal(new Set(results.map((result) => result.sessionId)).size, 1);
          assert.equal(pids[0]!.length, 1, `one claude process: ${pids[0]}`);
          assert.deepEqual(pids, [pids[0], pids[0], pids[0]], "the same process each time");
          assert.equal(relay.sessionCount, 1);
          // One conversation: the third request reached the model with the first two in it.
          const third = api.messageRequests.at(-1)?.body as { messages: unknown[] };
          const history = JSON.stringify(third.messages);
          assert.ok(history.includes('"one"') && history.includes('"two"'), history);
        },
      );

      // A defect this suite found: reading readyState of another request's socket throws in
      // workerd, outside the try of the flush, so the turn hung; now it fails at once.
      await t.step({
        name: "a session used from another request fails at once, in workerd's words",
        fn: async () => {
          await using other = await tempDir();
          await prepare("tests/e2e/runtimes/fixtures/shared_session_worker.ts", other.path);
          const started = await startWorkerd(bin.workerd!, other.path, fixture);
          await using _shared = started.child;
          const first = await (await post(started.base, "first")).json();
          assert.deepEqual(first, { ok: true, text: "Echo: first" });
          const second = await (await post(started.base, "second")).json();
          assert.equal(second.ok, false);
          assert.match(second.message, /Cannot perform I\/O on behalf of a different request/);
          assert.ok(second.ms < 2_000, `failed after ${second.ms} ms, not at once`);
        },
      });
    }, { api: { slowDelayMs: 100 } });
  },
);
