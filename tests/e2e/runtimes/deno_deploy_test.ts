/**
 * Deploy-like Deno: programs that hold no permission but the network drive
 * the real CLI through a relay. A client run with `--allow-net=<relay>` and
 * nothing else completes two turns, and the subprocess entry tells it, as a
 * `not_permitted` DuplexError, which flag it lacks; the Deploy-style handler
 * of `examples/edge/deno_deploy.ts` streams a turn to an HTTP client as
 * server-sent events, one session per request, and a client that leaves
 * interrupts its turn.
 */
import assert from "node:assert/strict";
import { waitUntil } from "../_harness.ts";
import { Child } from "./_processes.ts";
import { interrupted, projectPath, runtimeTest, withRelay } from "./_runtimes.ts";
import { readTurn, readUntilSilent } from "./_sse.ts";

/** The environment of a child `deno`: its cache, nothing else of ours. */
function denoEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...extra };
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

runtimeTest(
  "Deploy-like Deno: --allow-net to the relay alone runs turns; subprocess is not_permitted",
  [],
  async (t, cli) => {
    await withRelay(cli, async ({ relay, token }) => {
      await t.step(
        "a client with --allow-net=127.0.0.1:<port> only completes two turns",
        async () => {
          await using client = await Child.spawn(Deno.execPath(), {
            args: [
              "run",
              "--no-lock",
              `--allow-net=127.0.0.1:${relay.port}`,
              projectPath("tests/e2e/runtimes/fixtures/deploy_client.ts"),
            ],
            cwd: projectPath("."),
            env: denoEnv(),
            stdin: JSON.stringify({ url: relay.url, token, prompts: ["first", "second"], cli }),
          });
          const status = await client.exit(60_000);
          assert.equal(status.code, 0, client.describe());
          const report = JSON.parse(client.stdout);
          assert.deepEqual(report.turns.map((turn: { text: string }) => turn.text), [
            "Echo: first",
            "Echo: second",
          ]);
          const [one, two] = report.turns;
          assert.match(one.sessionId, /^[0-9a-f-]{36}$/);
          assert.equal(two.sessionId, one.sessionId, "both turns ran in one session");

          // The same permissions: the subprocess entry says which flag is missing.
          const { defaults, binary } = report.subprocess;
          assert.equal(defaults.isDuplexError, true);
          assert.equal(defaults.kind, "not_permitted");
          assert.match(defaults.message, /^Cannot start claude: .*needs --allow-env\b/);
          assert.deepEqual(binary, {
            isDuplexError: true,
            kind: "not_permitted",
            message: `Cannot start claude: Deno is not permitted to run ${cli}; ` +
              `run again with --allow-run=${cli} (or --allow-run)`,
          });
        },
      );

      await t.step("without that one permission the client fails with not_permitted", async () => {
        await using client = await Child.spawn(Deno.execPath(), {
          args: [
            "run",
            "--no-lock",
            "--allow-net=127.0.0.1:1", // not the relay
            projectPath("tests/e2e/runtimes/fixtures/deploy_client.ts"),
          ],
          cwd: projectPath("."),
          env: denoEnv(),
          stdin: JSON.stringify({ url: relay.url, token, prompts: ["first"], cli }),
        });
        const status = await client.exit(60_000);
        assert.notEqual(status.code, 0);
        assert.match(
          client.stderr,
          new RegExp(
            `DuplexError: Cannot connect to the relay at ${relay.url}: the runtime does not ` +
              `permit it \\(NotCapable: .*\\); allow the connection, for example with deno run ` +
              `--allow-net=127\\.0\\.0\\.1:${relay.port}`,
          ),
        );
      });
    });
  },
);

runtimeTest(
  "Deploy-like Deno: the Deno.serve handler streams server-sent events, a session per request",
  [],
  async (t, cli) => {
    await withRelay(cli, async ({ relay, token, sandbox }) => {
      const { api } = sandbox;
      await using server = await Child.spawn(Deno.execPath(), {
        args: [
          "run",
          "--no-lock",
          "--allow-net=127.0.0.1",
          "--allow-env=DUPLEX_RELAY_URL,DUPLEX_RELAY_TOKEN,PORT",
          projectPath("examples/edge/deno_deploy.ts"),
        ],
        cwd: projectPath("."),
        env: denoEnv({ DUPLEX_RELAY_URL: relay.url, DUPLEX_RELAY_TOKEN: token, PORT: "0" }),
      });
      const [, base] = await server.waitFor("stdout", /Listening on (http:\/\/127\.0\.0\.1:\d+)\//);
      const turnUrl = (prompt: string) => `${base}/turn?prompt=${encodeURIComponent(prompt)}`;

      const sessions: unknown[] = [];
      await t.step("the text arrives while the model is still streaming it", async () => {
        const response = await fetch(turnUrl("[[slow]] tell me slowly"), {
          signal: AbortSignal.timeout(30_000),
        });
        assert.equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
        const streamingAtFirstText: number[] = [];
        const turn = await readTurn(response.body!, () => {
          streamingAtFirstText.push(api.openStreams);
        });
        assert.equal(turn.error, undefined);
        assert.equal(turn.result?.text, "Echo: [[slow]] tell me slowly");
        assert.equal(turn.texts.join(""), turn.result?.text);
        assert.ok(turn.texts.length >= 3, `${turn.texts.length} text events`);
        assert.equal(streamingAtFirstText[0], 1, "the model's reply was still streaming");
        sessions.push(turn.result?.sessionId);
      });

      await t.step("each request has its own session, closed after its turn", async () => {
        const response = await fetch(turnUrl("again"), { signal: AbortSignal.timeout(30_000) });
        const turn = await readTurn(response.body!);
        assert.equal(turn.result?.text, "Echo: again");
        sessions.push(turn.result?.sessionId);
        assert.notEqual(sessions[1], sessions[0]);
        await waitUntil(() => relay.sessionCount === 0, "the relay's sessions closed");
      });

      await t.step("a client that leaves interrupts its turn in the CLI", async () => {
        const leave = new AbortController();
        const response = await fetch(turnUrl("[[stall]] deploy waits"), { signal: leave.signal });
        await readUntilSilent(response.body!);
        leave.abort();
        await api.waitForStreamsClosed({ timeoutMs: 10_000 }); // the CLI aborted its request
        await waitUntil(() => relay.sessionCount === 0, "the handler closing its session");
        // Interrupted, not killed: the CLI recorded the interrupt in the conversation.
        assert.equal(await interrupted(sandbox.home, "[[stall]] deploy waits"), true);
      });
    }, { api: { slowDelayMs: 100 } });
  },
);
