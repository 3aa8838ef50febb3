/**
 * The hostile-client suite, part 3: memory. Anonymous clients (no token, a
 * wrong one, a forged or expired JWT, a forbidden origin) that open a
 * WebSocket and send large frames at once, without waiting for an answer,
 * must cost the relay next to nothing: they are refused with HTTP 401 / 403
 * before any upgrade, so no frame of theirs is read. Until they were (issue
 * 21, finding 2), each was upgraded so that it could read its refusal, and
 * Deno read every frame in full meanwhile: 8 such sockets raised the relay's
 * peak memory by ~200 MB. The relay runs in a process of its own
 * (`_memory_relay.ts`), whose peak resident size (`VmHWM`) is read.
 *
 * A connection refused after its upgrade (it had a credential, then broke
 * the protocol) is closed once it is quiet, at the latest 1 s after the
 * refusal whatever it sends, and at once when it sends more than 1 MiB after
 * the refusal; it stays counted among the handshakes in progress (`maxPendingConnections`)
 * until its socket has closed (or, its client never answering the close, for
 * a bounded time). Until then it left the count at the refusal: however
 * many refused connections lingered, none of them counted.
 */

import assert from "node:assert/strict";
import { mintRelayToken } from "../../../adapters/relay/mod.ts";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { makeTestDir, spawnCount, startRelay, TestClient, TOKEN } from "./_client.ts";
import { OPCODE, RawClient, upgradeRequest } from "./_raw_client.ts";

const SECRET = "memory-suite-secret-0123456789abcdef";
const APP = "https://app.example.com";
const PROGRAM = decodeURIComponent(new URL("./_memory_relay.ts", import.meta.url).pathname);
const CONFIG = decodeURIComponent(new URL("../../../deno.json", import.meta.url).pathname);
/** How many anonymous sockets attack at once. */
const SOCKETS = 100;
/** The most the relay's peak resident size may grow under the attack, in kB. */
const MAX_GROWTH_KB = 10 * 1024;
/** The bound on one attacking socket, in ms. */
const SOCKET_BOUND_MS = 20_000;

/** The relay's process: its port, and its memory on demand. */
class RelayProcess implements AsyncDisposable {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: ReadableStreamDefaultReader<string>;
  #buffered = "";

  private constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  static async start(workspace: string): Promise<{ relay: RelayProcess; port: number }> {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", `--config=${CONFIG}`, PROGRAM, workspace, SECRET, APP],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const relay = new RelayProcess(child);
    try {
      const { port } = await relay.#line() as { port: number };
      return { relay, port };
    } catch (error) {
      await relay[Symbol.asyncDispose]();
      throw error;
    }
  }

  /** Asks for `reset` or `peak`: the resident size and its peak, in kB. */
  async memory(command: "reset" | "peak"): Promise<{ rss: number; hwm: number }> {
    await this.#writer.write(new TextEncoder().encode(`${command}\n`));
    return await this.#line() as { rss: number; hwm: number };
  }

  async #line(): Promise<unknown> {
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 30_000);
    try {
      while (!this.#buffered.includes("\n")) {
        const { done, value } = await this.#lines.read();
        if (done) throw new Error("The relay's process ended");
        this.#buffered += value;
      }
    } finally {
      clearTimeout(timer);
    }
    const end = this.#buffered.indexOf("\n");
    const line = this.#buffered.slice(0, end);
    this.#buffered = this.#buffered.slice(end + 1);
    return JSON.parse(line);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    const late = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
    try {
      await this.#writer.write(new TextEncoder().encode("exit\n")).catch(() => {});
      await this.#writer.close().catch(() => {});
      await this.#child.status;
      while (!(await this.#lines.read()).done) { /* drain */ }
    } finally {
      clearTimeout(late);
    }
  }
}

/** One anonymous client: the headers it offers beyond the upgrade's own. */
interface Attacker {
  readonly name: string;
  readonly headers: readonly string[];
  readonly status: number;
}

/** The header of one masked text frame of `bytes` bytes (a zero mask: the payload as sent). */
function frameHeader(bytes: number): Uint8Array {
  const head = new Uint8Array(14);
  head[0] = 0x81;
  head[1] = 0x80 | 127;
  new DataView(head.buffer).setBigUint64(2, BigInt(bytes));
  return head;
}

/**
 * Sends an upgrade request and, at once, `frames` frames of `frameBytes`
 * each, as an attacker that does not wait for the answer would; returns the
 * HTTP status it got (0 for none) and how many bytes it could send.
 */
async function attack(
  port: number,
  attacker: Attacker,
  frameBytes: number,
  frames: number,
): Promise<{ status: number; sent: number }> {
  const connection = await Deno.connect({ hostname: "127.0.0.1", port });
  // The bound on the whole attempt: closing the connection ends a blocked write or read.
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    connection.close();
  };
  const bound = setTimeout(close, SOCKET_BOUND_MS);
  let answer = "";
  const reading = (async () => {
    const buffer = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await connection.read(buffer);
      if (n === null) return;
      if (answer.length < 4096) answer += new TextDecoder().decode(buffer.subarray(0, n));
    }
  })().catch(() => {});
  let sent = 0;
  try {
    await connection.write(upgradeRequest(port, attacker.headers));
    const chunk = new Uint8Array(256 * 1024).fill(0x61);
    for (let frame = 0; frame < frames; frame++) {
      await connection.write(frameHeader(frameBytes));
      for (let at = 0; at < frameBytes; at += chunk.length) {
        sent += await connection.write(chunk.subarray(0, Math.min(chunk.length, frameBytes - at)));
      }
    }
  } catch {
    // The relay closed the connection: what a refusal before the upgrade does.
  }
  // The answer comes (and, refused, the connection ends) soon after; bounded.
  const waited = setTimeout(close, 2_000);
  await reading;
  clearTimeout(waited);
  clearTimeout(bound);
  close();
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0), sent };
}

Deno.test(
  `hostile clients: ${SOCKETS} anonymous sockets sending large frames cost the relay under 10 MB`,
  async (t) => {
    const workspace = await makeTestDir();
    try {
      const { relay, port } = await RelayProcess.start(workspace);
      await using _ = relay;
      const now = Math.floor(Date.now() / 1000);
      const protocols = (token?: string) =>
        `Sec-WebSocket-Protocol: ${
          token === undefined ? SUBPROTOCOL : `${SUBPROTOCOL}, ${bearerProtocol(token)}`
        }`;
      const attackers: Attacker[] = [
        { name: "no token", headers: [protocols()], status: 401 },
        { name: "a wrong token", headers: [protocols("not-the-token")], status: 401 },
        {
          name: "a JWT of another secret",
          headers: [
            protocols(
              await mintRelayToken({
                secret: "another-secret-0123456789abcdefghij",
                subject: "mallory",
                ttlSeconds: 60,
              }),
            ),
          ],
          status: 401,
        },
        {
          name: "an expired JWT",
          headers: [
            protocols(
              await mintRelayToken({
                secret: SECRET,
                subject: "mallory",
                ttlSeconds: 60,
                issuedAt: now - 3600,
              }),
            ),
          ],
          status: 401,
        },
        {
          name: "a forbidden origin (with the token)",
          headers: [protocols(TOKEN), "Origin: https://evil.example"],
          status: 403,
        },
      ];
      const wave = (frameBytes: number, frames: number) =>
        Promise.all(
          Array.from(
            { length: SOCKETS },
            (_, i) => attack(port, attackers[i % attackers.length]!, frameBytes, frames),
          ),
        );

      await t.step("a good client is served (the relay works)", async () => {
        const client = new TestClient(`ws://127.0.0.1:${port}/v1`);
        await using _client = client;
        await client.opened;
        client.send({ t: "hello", v: 1, spawn: {} });
        assert.equal((await client.next("ready", 15_000)).resumed, false);
      });

      await t.step("the same attack with small frames first, for a steady baseline", async () => {
        const results = await wave(64 * 1024, 1);
        assert.equal(results.length, SOCKETS);
      });

      await t.step(
        "100 sockets, two frames of 8 MiB each: the peak grows under 10 MB",
        async () => {
          const before = await relay.memory("reset");
          const results = await wave(8 * 1024 * 1024, 2);
          const after = await relay.memory("peak");
          const growth = after.hwm - before.rss;
          const sent = results.reduce((sum, result) => sum + result.sent, 0);
          assert.ok(
            growth < MAX_GROWTH_KB,
            `the relay's peak grew by ${Math.round(growth / 1024)} MB (from ${
              Math.round(before.rss / 1024)
            } MB) while the attackers sent ${Math.round(sent / 1024 / 1024)} MB`,
          );
        },
      );

      await t.step("each was refused with its HTTP status, before any WebSocket", async () => {
        const results = await wave(64 * 1024, 1);
        results.forEach((result, i) => {
          const attacker = attackers[i % attackers.length]!;
          assert.equal(result.status, attacker.status, attacker.name);
        });
      });

      await t.step("an admitted client flooding after its refusal is cut off soon", async () => {
        // Refused after its upgrade (not a hello first), it goes on sending 64 KiB frames as
        // fast as it can: past 1 MiB after its refusal it is closed at once (and at the latest
        // 1 s after the refusal, a deadline its frames cannot move).
        const refused = await RawClient.open(port);
        await using _refused = refused;
        await refused.sendText(JSON.stringify({ t: "in", seq: 1, line: "{}" }));
        await refused.next(OPCODE.text);
        const started = Date.now();
        const sent = await refused.flood(64 * 1024, 3_000);
        const after = Date.now() - started;
        assert.ok(
          after < 600,
          `closed ${after} ms after the refusal, ${sent} bytes sent meanwhile`,
        );
      });

      await t.step("nothing was spawned for them; the relay still serves", async () => {
        assert.equal(await spawnCount(`${workspace}.spawns`), 1, "only the good client's");
        const client = new TestClient(`ws://127.0.0.1:${port}/v1`);
        await using _client = client;
        await client.opened;
        client.send({ t: "hello", v: 1, spawn: {} });
        assert.equal((await client.next("ready", 15_000)).resumed, false);
      });
    } finally {
      await Deno.remove(`${workspace}.spawns`).catch(() => {});
      await Deno.remove(workspace, { recursive: true });
    }
  },
);

/** Upgrades (the test token) until one is taken, for at most `ms`; returns how long it took. */
async function upgradeTaken(port: number, ms: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const client = await RawClient.open(port);
    await client.close();
    if (client.status === 101) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`No upgrade taken within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("hostile clients: a connection refused after its upgrade stays counted until it closes, and cannot put its close off", async (t) => {
  // maxPendingInputBytes: the most input an honest client can have in flight.
  await using env = await startRelay({
    maxPendingConnections: 1,
    maxPendingInputBytes: 256 * 1024,
  });
  const { relay } = env;
  const notHello = JSON.stringify({ t: "in", seq: 1, line: "{}" });

  await t.step("one that dribbles is closed 1 s after its refusal, never later", async () => {
    const client = new TestClient(relay.url);
    await using _ = client;
    await client.opened;
    client.socket.send(notHello);
    const sending = setInterval(() => {
      try {
        client.socket.send(JSON.stringify({ t: "ping", at: 1 }));
      } catch { /* closing */ }
    }, 5);
    try {
      await client.next("error");
      const refused = Date.now();
      await client.closeCode(5_000);
      const after = Date.now() - refused;
      assert.ok(after < 1_800, `closed ${after} ms after the refusal`);
    } finally {
      clearInterval(sending);
    }
  });

  await t.step(
    "it keeps its slot while its socket is open: the next upgrade gets 503",
    async () => {
      const refused = await RawClient.open(relay.port);
      assert.equal(refused.status, 101);
      await refused.sendText(notHello);
      await refused.next(OPCODE.text);
      await refused.next(OPCODE.close); // the relay's close frame: never answered
      const turnedAway = await RawClient.open(relay.port);
      await turnedAway.close();
      assert.equal(turnedAway.status, 503, "maxPendingConnections 1, taken by the refused one");
      await refused.close(); // its socket closes: the slot is free
      assert.ok(await upgradeTaken(relay.port, 3_000) < 3_000);
    },
  );

  await t.step("one that never answers the close frees its slot after a bound", async () => {
    const refused = await RawClient.open(relay.port);
    await using _ = refused;
    assert.equal(refused.status, 101);
    await refused.sendText(notHello);
    await refused.next(OPCODE.close);
    const waited = await upgradeTaken(relay.port, 6_000);
    assert.ok(waited >= 1_000, `held ${waited} ms, though its close was never answered`);
    assert.equal(refused.ended, false, "its connection is still open");
  });
  assert.equal(await env.spawns(0), 0);
});
