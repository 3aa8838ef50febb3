/**
 * A parked spare of the real `claude` claimed with a model, a thinking
 * budget and settings (`ClaimOptions`, as the SDK 0.3.333 sends them:
 * `apply_flag_settings` ahead of `claim_session`, `set_model`,
 * `set_max_thinking_tokens` and the following settings after it): the next
 * turn's Messages request (the fake API records it) uses the claimed model,
 * `settings()` shows the overlay, hook settings are refused before anything
 * is sent and the spare can still be claimed. Through the pool too: a
 * conversation's model and settings on the parked spare it lands on.
 *
 * The first scenario sends the claim with `sendClaim` over the session's
 * `request`, the claim itself through `claimSession`, as the pool does:
 * `DuplexSession.claimSession` calls `sendClaim` itself once it takes these
 * options (then `session.claimSession(claim)` is the same sequence).
 *
 * @module
 */

import assert from "node:assert/strict";
import { type ClaimOptions, DuplexSession, isDuplexError } from "../../mod.ts";
import { sendClaim } from "../../src/session/claim.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { e2eTest, stepSince, withSandbox } from "./_harness.ts";
import { requestOf, TURN, withPool } from "./_pool_harness.ts";

/** An alias: `set_model` with a name the CLI does not know asks the API to validate it. */
const MODEL = "haiku";
/** What the CLI sends for the alias (its resolved model id starts so). */
const SENT = /haiku/;

e2eTest(
  "claimSession: a parked spare claimed with a model, a thinking budget and settings",
  async (t, cli) => {
    await stepSince(t, "2.1.281", "--await-claim", "the claim's model and settings", async (t) => {
      await withSandbox(async (box) => {
        const park = `${box.root}/park`;
        const folder = `${box.root}/alice`;
        await Deno.mkdir(park);
        await Deno.mkdir(folder);
        await using session = await DuplexSession.start({
          transport: subprocess({
            binary: cli,
            cwd: park,
            env: box.env,
            clearEnv: true,
            awaitClaim: true,
          }),
        });

        /** The claim as the pool sends it: extras by `sendClaim`, the claim by `claimSession`. */
        const claimWith = (claim: ClaimOptions) => {
          const { model: _m, maxThinkingTokens: _t, settings: _s, ...bare } = claim;
          const limit = { timeoutMs: 20_000 };
          return sendClaim(
            claim,
            (subtype, fields) =>
              subtype === "claim_session"
                ? session.claimSession(bare, limit)
                : session.request(subtype, fields, limit),
          );
        };

        await t.step("hook settings are refused before anything is sent", async () => {
          await assert.rejects(
            claimWith({ cwd: folder, settings: { hooks: {}, cleanupPeriodDays: 9 } }),
            (error: unknown) =>
              isDuplexError(error, "invalid_argument") &&
              /hook settings \(hooks\)/.test(error.message),
          );
          assert.equal(session.sessionId, undefined, "still parked: the next step claims it");
        });

        await t.step("the claim sets the model, the budget and the settings", async () => {
          await claimWith({
            cwd: folder,
            model: MODEL,
            maxThinkingTokens: 2048,
            settings: { cleanupPeriodDays: 42, permissions: { deny: ["WebFetch"] } },
          });
          assert.ok(session.sessionId, "the session took the claimed id");
          const turn = await session.send("hello after the claim", TURN);
          assert.equal(turn.result.text, "Echo: hello after the claim");
          const request = await requestOf(box.api, "hello after the claim");
          assert.match(String(request.model), SENT, `the turn asked for ${request.model}`);
          const settings = await session.settings();
          const effective = settings.effective ?? {};
          assert.equal(effective.cleanupPeriodDays, 42, "the overlay ahead of the claim");
          const deny = (effective.permissions as { deny?: string[] } | undefined)?.deny ?? [];
          assert.ok(
            deny.includes("WebFetch"),
            `the overlay after the claim: ${JSON.stringify(deny)}`,
          );
        });
        await session.close();
      });
    });
  },
);

e2eTest(
  "SessionPool: a conversation's model and settings on the parked spare it lands on",
  async (t, cli) => {
    await stepSince(
      t,
      "2.1.281",
      "--await-claim",
      "a pool claim with model and settings",
      async () => {
        await withSandbox(async (box) => {
          const folder = `${box.root}/bob`;
          await Deno.mkdir(folder);
          await withPool(cli, box, { parkedSpares: 1 }, async (p) => {
            await p.next("spare_ready", (e) => e.kind === "parked");
            const session = await p.pool.acquire("bob", {
              cwd: folder,
              model: MODEL,
              settings: { cleanupPeriodDays: 17 },
            });
            assert.equal((await p.next("started", (e) => e.key === "bob")).via, "parked");
            await session.send("hello from the pool", TURN);
            const request = await requestOf(box.api, "hello from the pool");
            assert.match(String(request.model), SENT);
            assert.equal((await session.settings()).effective?.cleanupPeriodDays, 17);
            p.pool.release("bob");
          });
        });
      },
    );
  },
);
