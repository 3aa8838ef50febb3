/**
 * `SessionPool({ primeSpares: true })` on the real `claude` 2.1.332 and the
 * fake Messages API: a primed warm spare serves a conversation that cannot
 * tell it from a plain spare. One pool without priming, then one with it,
 * in the same folders; the same two turns on each; compared: what the fake
 * API received (no request from the priming, and the conversation's first
 * request carries the same messages as the plain spare's), the session id
 * (the result's, the session's, the transcript's), the transcript and the
 * history read back (`getSessionMessages`), the turn count, usage and cost.
 *
 * @module
 */

import assert from "node:assert/strict";
import { getSessionMessages, listSessions } from "../../adapters/subprocess/history/mod.ts";
import type { DuplexSession, Turn } from "../../mod.ts";
import { e2eTest, withSandbox } from "./_harness.ts";
import type { FakeApiRequest } from "./fake_api.ts";
import { TURN, withPool } from "./_pool_harness.ts";

interface Served {
  readonly sessionId: string;
  readonly turns: Turn[];
  readonly requests: FakeApiRequest[];
  readonly duringSpare: number;
  readonly stats: DuplexSession["stats"];
}

/** The messages of a request with the volatile parts (ids, dates, folders) and the prompt made equal. */
function shapeOf(request: FakeApiRequest | undefined, prompt: string, root: string): string {
  const body = request?.body as { messages?: unknown } | null;
  return JSON.stringify(body?.messages ?? null)
    .replaceAll(prompt, "<prompt>")
    .replaceAll(root, "<root>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\d{4}-\d{2}-\d{2}/g, "<date>");
}

e2eTest(
  "SessionPool primeSpares: the priming is invisible to the conversation (API, id, transcript, history, cost)",
  async (t, cli) => {
    await withSandbox(async (box) => {
      const configDir = `${box.home}/.claude`;
      const serve = async (primeSpares: boolean, key: string): Promise<Served> => {
        let served: Served | undefined;
        await withPool(cli, box, { spares: 1, primeSpares }, async (p) => {
          const before = box.api.requests.length;
          await p.next("spare_ready", (e) => e.kind === "warm", 30_000);
          const duringSpare = box.api.requests.length - before;
          const session = await p.pool.acquire(key);
          const from = box.api.requests.length;
          const turns = [
            await session.send(`${key}: first`, TURN),
            await session.send(`${key}: second`, TURN),
          ];
          const started = p.events.find((e) => e.type === "started" && e.key === key);
          assert.equal(started?.type === "started" && started.via, "spare");
          served = {
            sessionId: session.sessionId ?? "",
            turns,
            requests: box.api.requests.slice(from),
            duringSpare,
            stats: session.stats,
          };
          p.pool.release(key);
          // The replacement spare, primed too (or not), left unused: closed with the pool.
          await p.next("spare_ready", (e) => e.kind === "warm", 30_000);
        });
        return served!;
      };
      const plain = await serve(false, "plain");
      const primed = await serve(true, "primed");

      await t.step("the priming makes no API request; the turns make one each", () => {
        assert.equal(plain.duringSpare, 0);
        assert.equal(primed.duringSpare, 0, "nothing reached the API while the spare was primed");
        assert.deepEqual(primed.requests.map((r) => r.path), ["/v1/messages", "/v1/messages"]);
        assert.deepEqual(plain.requests.map((r) => r.path), ["/v1/messages", "/v1/messages"]);
      });

      await t.step(
        "the first request carries what a plain spare's does, nothing of the priming",
        () => {
          const [first] = primed.requests;
          assert.equal(first?.prompt, "primed: first");
          assert.equal(
            shapeOf(first, "primed: first", box.root),
            shapeOf(plain.requests[0], "plain: first", box.root),
          );
          assert.equal(
            shapeOf(primed.requests[1], "primed: second", box.root)
              .replaceAll("primed: first", "<first>"),
            shapeOf(plain.requests[1], "plain: second", box.root).replaceAll(
              "plain: first",
              "<first>",
            ),
          );
          assert.doesNotMatch(JSON.stringify(first?.body), /\(no content\)/);
        },
      );

      await t.step(
        "the system prompt and tools are a plain spare's, the billing fingerprint aside",
        () => {
          const system = (request: FakeApiRequest | undefined) => {
            const body = request?.body as { system?: unknown; tools?: unknown } | null;
            return JSON.stringify([body?.system, body?.tools])
              .replaceAll(box.root, "<root>")
              .replace(/cc_version=([0-9.]+)\.[0-9a-f]+;/, "cc_version=$1.<fingerprint>;");
          };
          assert.equal(system(primed.requests[0]), system(plain.requests[0]));
        },
      );

      await t.step("one session id: the result's, the session's, the transcript's", async () => {
        assert.equal(primed.sessionId === plain.sessionId, false);
        assert.match(primed.sessionId, /^[0-9a-f-]{36}$/);
        for (const turn of primed.turns) assert.equal(turn.result.sessionId, primed.sessionId);
        const sessions = await listSessions({ dir: box.work, configDir });
        const ids = sessions.map((s) => s.sessionId);
        assert.ok(ids.includes(primed.sessionId), `listed: ${ids}`);
        assert.ok(ids.includes(plain.sessionId), `listed: ${ids}`);
        assert.equal(ids.length, 2, `only the conversations are listed: ${ids}`);
        const slug = box.work.replace(/[^A-Za-z0-9]/g, "-");
        const files: string[] = [];
        for await (const entry of Deno.readDir(`${configDir}/projects/${slug}`)) {
          if (entry.name.endsWith(".jsonl")) files.push(entry.name);
        }
        assert.deepEqual(
          files.sort(),
          [`${plain.sessionId}.jsonl`, `${primed.sessionId}.jsonl`].sort(),
          "an unused primed spare (the replacement, closed with the pool) leaves no transcript",
        );
      });

      await t.step("the history read back is the plain spare's, turn for turn", async () => {
        const read = async (served: Served) =>
          (await getSessionMessages(served.sessionId, { dir: box.work, configDir })).map((m) =>
            `${m.type}: ${
              JSON.stringify("message" in m ? m.message : m).replace(/plain|primed/g, "<key>")
            }`
          );
        const history = await read(primed);
        assert.equal(history.length, 4, history.join("\n"));
        assert.deepEqual(
          history.map((line) => line.replace(/"id":"[^"]*"/g, "")),
          (await read(plain)).map((line) => line.replace(/"id":"[^"]*"/g, "")),
        );
      });

      await t.step("the transcript holds the two prompts as its only user messages", async () => {
        const slug = box.work.replace(/[^A-Za-z0-9]/g, "-");
        const lines =
          (await Deno.readTextFile(`${configDir}/projects/${slug}/${primed.sessionId}.jsonl`))
            .split("\n").filter(Boolean).map((line) => JSON.parse(line));
        const users = lines.filter((e) => e.type === "user").map((e) =>
          (e.message?.content as { text?: string }[]).map((block) => block.text).join("")
        );
        assert.deepEqual(users, ["primed: first", "primed: second"]);
      });

      await t.step("turn count, usage and cost are a plain spare's", () => {
        assert.deepEqual(primed.stats.turns, plain.stats.turns);
        assert.deepEqual(primed.stats.turns, { ok: 2, error: 0, aborted: 0 });
        primed.turns.forEach((turn, i) => {
          const other = plain.turns[i]!.result;
          assert.equal(turn.result.numTurns, other.numTurns);
          assert.equal(turn.result.totalCostUsd, other.totalCostUsd);
          assert.deepEqual(turn.result.tokens, other.tokens);
        });
      });
    });
  },
);
