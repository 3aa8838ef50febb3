/**
 * The deployment a relay facing the internet needs: `deno task relay` behind
 * HAProxy with the configuration the project ships
 * (`examples/relay/haproxy.cfg`, as the failover test uses it). Deno.serve
 * has no header timeout, so a half-sent HTTP request holds its connection
 * for over a minute (issue 21, finding 5: 40 of them were all still held
 * after 12 s) and the relay's `maxPendingConnections` counts only complete
 * requests. Here 200 half-sent requests (slowloris: one more header line a
 * second, never the end), from a source address of their own, are all cut
 * by the proxy (its per-source limits close most at once, its header
 * timeout the rest), while a real client's turns through the same proxy
 * complete; one such request sent to the relay itself is still held.
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { e2eTest, withSandbox } from "./_harness.ts";
import { haproxyStatus, startHaproxy } from "./_failover_harness.ts";
import { unavailableStep } from "../_unavailable.ts";

const MAIN = decodeURIComponent(new URL("../../adapters/relay/main.ts", import.meta.url).pathname);
const SLOWLORIS = decodeURIComponent(new URL("./_slowloris.ts", import.meta.url).pathname);
const TOKEN = crypto.randomUUID();
/** The attackers' own loopback address (the real client comes from 127.0.0.1). */
const ATTACKER = "127.0.0.2";
const HALF_SENT = 200;
/** The shipped configuration's header timeout (`timeout http-request`), in ms. */
const HEADER_TIMEOUT_MS = 5_000;

/** `deno task relay` as a process of its own, configured by its environment. */
async function startRelayProgram(env: Record<string, string>): Promise<
  AsyncDisposable & { port: number }
> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", "--quiet", MAIN],
    env: { ...env, NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const late = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    while (!text.includes("\n")) {
      const { done, value } = await lines.read();
      if (done) break;
      text += value;
    }
  } finally {
    clearTimeout(late);
  }
  const rest = (async () => {
    while (!(await lines.read()).done) { /* drain */ }
  })();
  const port = Number(/Relay listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(text)?.[1] ?? 0);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await child.status;
    clearTimeout(kill);
    await rest;
    return await stderr;
  };
  if (port === 0) throw new Error(`The relay did not listen: ${text} ${await stop()}`);
  return { port, [Symbol.asyncDispose]: async () => void await stop() };
}

/** The slowloris attacker, a process of its own (it needs net access to its own address). */
function startSlowloris(port: number, boundMs: number): {
  attempted: Promise<void>;
  result: Promise<{ closedMs: number[]; open: number; answers: Record<string, number> }>;
} {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--allow-net=127.0.0.1,${ATTACKER}`,
      "--no-config",
      "--quiet",
      SLOWLORIS,
      String(port),
      String(HALF_SENT),
      ATTACKER,
      String(boundMs),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const { promise: attempted, resolve: attemptedAll } = Promise.withResolvers<void>();
  const result = (async () => {
    const lines: unknown[] = [];
    let text = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      const parts = text.split("\n");
      text = parts.pop()!;
      for (const part of parts) {
        lines.push(JSON.parse(part));
        if (lines.length === 1) attemptedAll();
      }
    }
    const status = await child.status;
    attemptedAll();
    if (!status.success || lines.length < 2) {
      throw new Error(`The attacker failed (${status.code}): ${JSON.stringify(lines)}`);
    }
    return lines[1] as { closedMs: number[]; open: number; answers: Record<string, number> };
  })();
  return { attempted, result };
}

e2eTest(
  "proxy: behind examples/relay/haproxy.cfg, 200 half-sent requests are cut while a real client's turns complete",
  async (t, cli) => {
    const haproxy = haproxyStatus();
    if (!haproxy.available) {
      await unavailableStep(t, "the proxy scenario", haproxy.reason);
      return;
    }
    await withSandbox(async ({ env, root, work, home }) => {
      await using relay = await startRelayProgram({
        ...env,
        HOME: home,
        DUPLEX_RELAY_TOKENS: TOKEN,
        DUPLEX_RELAY_PORT: "0",
        DUPLEX_RELAY_WORKSPACE: work,
        CLAUDE_CLI: cli,
        // Where the relay passes only an allow-list of its environment to the CLIs.
        DUPLEX_RELAY_CLI_ENV: "DISABLE_TELEMETRY,DISABLE_AUTOUPDATER",
      });
      // The shipped configuration as it is, but for its address and its one server.
      await using proxy = await startHaproxy([relay.port], root, {
        check: { interval: "2s", fall: 2, rise: 2 },
      });
      // A control: one half-sent request straight to the relay.
      const direct = await Deno.connect({ hostname: "127.0.0.1", port: relay.port });
      await direct.write(new TextEncoder().encode(`GET /v1 HTTP/1.1\r\nHost: relay\r\n`));
      try {
        const attackStarted = Date.now();
        const attack = startSlowloris(proxy.port, 20_000);
        await attack.attempted;

        await t.step("a real client's turns complete through the proxy meanwhile", async () => {
          await using session = await DuplexSession.start({
            transport: remote({ url: proxy.urlFor("proxy-e2e"), token: TOKEN, reconnect: false }),
          });
          for (const prompt of ["Hello through the proxy", "And a second turn"]) {
            const turn = await session.send(prompt, { timeoutMs: 60_000 });
            assert.equal(turn.result.text, `Echo: ${prompt}`);
          }
        });

        await t.step(
          "every half-sent request is cut by the proxy, none later than its header timeout",
          async () => {
            const { closedMs, open, answers } = await attack.result;
            assert.equal(open, 0, `${open} of ${HALF_SENT} half-sent requests still held`);
            assert.equal(closedMs.length, HALF_SENT);
            const last = Math.max(...closedMs);
            assert.ok(
              last < HEADER_TIMEOUT_MS + 4_000,
              `the last was cut ${last} ms after the attack began (header timeout 5 s)`,
            );
            assert.ok(
              (answers["408"] ?? 0) > 0,
              `some held until the timeout: ${JSON.stringify(answers)}`,
            );
            assert.ok(Date.now() - attackStarted >= HEADER_TIMEOUT_MS - 500);
          },
        );

        await t.step(
          "the relay alone still holds its half-sent request (no header timeout)",
          async () => {
            // As long as the proxy's timeout has passed: the relay has not answered nor closed.
            const read = direct.read(new Uint8Array(1024))
              .then((n) => n === null ? "closed" : "answered", () => "cut");
            let timer: ReturnType<typeof setTimeout> | undefined;
            const pending = new Promise<"pending">((resolve) => {
              timer = setTimeout(() => resolve("pending"), 300);
            });
            const outcome = await Promise.race([read, pending]);
            clearTimeout(timer);
            assert.equal(outcome, "pending", "Deno.serve cuts nothing: the proxy has to");
            direct.close();
            await read;
          },
        );
      } finally {
        try {
          direct.close();
        } catch { /* closed by the step */ }
      }
    });
  },
);
