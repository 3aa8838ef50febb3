/**
 * The relay for many tenants on the real CLI (issue 21, findings 1 and 4):
 * `deno task relay` (adapters/relay/main.ts), run with its secrets, static
 * token and a database URL in its own environment, serves two tenants
 * (scoped tokens of subjects alice and bob) with tenancy per-owner. Bob
 * tells his CLI a private mark; alice approves `Bash(env)`, the environment
 * of her tool's shell and its ancestors, `Bash(cat <bob's transcript>)`,
 * `Read(<bob's transcript>)`, `Bash(ls <the relay's root>)` and
 * `Read(<the relay's root>)`, and the tool results her CLI sent the fake
 * Messages API are checked:
 *
 * - with `DUPLEX_RELAY_ISOLATION=bubblewrap`, none holds the relay's secret,
 *   token or database URL, nor anything of bob's (his mark, his folder);
 * - without a sandbox, `Bash(env)` still holds no secret (the CLI's
 *   environment is allow-listed), but the same calls do reach bob's
 *   transcript and the relay's own environment through /proc, as the trust
 *   model says (so the checks above can fail).
 *
 * @module
 */

import assert from "node:assert/strict";
import { allow, DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { mintRelayToken } from "../../adapters/relay/mod.ts";
import { tenantId } from "../../adapters/relay/_tenancy.ts";
import { startProgram } from "../adapters/relay/_relay_program.ts";
import { unavailableStep } from "../_unavailable.ts";
import { e2eTest, withSandbox } from "./_harness.ts";
import type { FakeApi } from "./fake_api.ts";

const SECRET = `relay-signing-secret-${crypto.randomUUID()}`;
const STATIC = `relay-static-token-${crypto.randomUUID()}`;
const DATABASE = `postgres://relay:db-password-${crypto.randomUUID()}@db.internal/relay`;
const TURN = { timeoutMs: 60_000 } as const;
/** The environment of the tool's shell and of its nearest ancestors (the CLI, the relay). */
const ANCESTORS = 'p=$$; for i in 1 2 3 4 5 6; do [ "$p" -gt 0 ] || break; ' +
  "tr '\\0' '\\n' </proc/$p/environ; p=$(grep '^PPid' /proc/$p/status | cut -f2); done";

function onPath(name: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((dir) => {
    try {
      return Deno.statSync(`${dir}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

/** The contents of the tool results the fake API received after request `from`. */
function toolResultsSince(api: FakeApi, from: number): string {
  return api.requests.slice(from).flatMap((r) => r.toolResults.map((result) => result.content))
    .join("\n");
}

/** The transcripts under an owner's configuration folder. */
async function transcriptsOf(root: string, owner: string): Promise<string[]> {
  const projects = `${root}/tenants/${await tenantId(owner)}/home/.claude/projects`;
  const found: string[] = [];
  for await (const project of Deno.readDir(projects)) {
    for await (const file of Deno.readDir(`${projects}/${project.name}`)) {
      if (file.name.endsWith(".jsonl")) found.push(`${projects}/${project.name}/${file.name}`);
    }
  }
  return found;
}

interface Seen {
  /** Each approved call's tool results, by the call. */
  readonly results: Record<string, string>;
  readonly bobMark: string;
  readonly bobId: string;
  readonly aliceId: string;
}

/** Runs the relay program with `isolation`, bob's turn, then alice's approved calls. */
function run(cli: string, isolation: "none" | "bubblewrap"): Promise<Seen> {
  return withSandbox(async ({ api, root, env }) => {
    const workspace = `${root}/relay`;
    await Deno.mkdir(workspace);
    await using relay = await startProgram({
      DUPLEX_RELAY_SECRETS: SECRET,
      DUPLEX_RELAY_TOKENS: STATIC,
      DATABASE_URL: DATABASE,
      DUPLEX_RELAY_PORT: "0",
      DUPLEX_RELAY_WORKSPACE: workspace,
      DUPLEX_RELAY_ISOLATION: isolation,
      DUPLEX_RELAY_CLI_ENV: "DISABLE_TELEMETRY,DISABLE_AUTOUPDATER",
      CLAUDE_CLI: cli,
      // The CLI's offline settings (sandboxEnv), less the folders each owner gets of its own.
      ...Object.fromEntries(
        Object.entries(env).filter(([name]) =>
          !["HOME", "TMPDIR", "CLAUDE_CODE_TMPDIR"].includes(name)
        ),
      ),
      HOME: `${root}/home`, // the relay's own
    });
    assert.match(relay.url, /^ws:/, "the relay program started");
    const session = async (subject: string) =>
      await DuplexSession.start({
        transport: remote({
          url: relay.url,
          token: await mintRelayToken({ secret: SECRET, subject, ttlSeconds: 600 }),
          reconnect: false,
        }),
        onPermission: () => allow(),
      });
    const bobMark = `BOB-PRIVATE-${crypto.randomUUID()}`;
    {
      await using bob = await session("bob");
      const turn = await bob.send(`Remember ${bobMark}`, TURN);
      assert.equal(turn.result.isError, false);
    }
    const [bobTranscript] = await transcriptsOf(workspace, "sub:bob");
    assert.ok(bobTranscript, "bob's transcript is in his own folder");
    assert.ok((await Deno.readTextFile(bobTranscript)).includes(bobMark));
    const calls: Record<string, string> = {
      env: "[[tool:bash:env]]",
      ancestors: `[[tool:bash:${ANCESTORS}]]`,
      catBob: `[[tool:bash:cat ${bobTranscript}]]`,
      readBob: `[[tool:read:${bobTranscript}]]`,
      lsRoot: `[[tool:bash:ls -1a ${workspace} ${workspace}/tenants]]`,
      readRoot: `[[tool:read:${workspace}/tenants]]`,
    };
    const results: Record<string, string> = {};
    await using alice = await session("alice");
    for (const [name, prompt] of Object.entries(calls)) {
      const from = api.requests.length;
      const turn = await alice.send(prompt, TURN);
      assert.ok(turn.result.text !== undefined, `${name}: a result`);
      results[name] = toolResultsSince(api, from);
      assert.ok(results[name] !== "", `${name}: the tool ran and its result reached the model`);
    }
    await alice.close();
    return {
      results,
      bobMark,
      bobId: await tenantId("sub:bob"),
      aliceId: await tenantId("sub:alice"),
    };
  });
}

const RELAY_ONLY = [SECRET, STATIC, DATABASE, "DUPLEX_RELAY_SECRETS", "DATABASE_URL"];

e2eTest(
  "the relay for many tenants: alice's approved Bash and Read reach nothing of bob's nor of the relay's",
  async (t, cli) => {
    if (!onPath("bwrap")) {
      await unavailableStep(
        t,
        "with bubblewrap",
        "bwrap is not on PATH; apt-get install bubblewrap",
      );
    } else {
      await t.step("with bubblewrap: nothing of bob's, no secret of the relay's", async () => {
        const seen = await run(cli, "bubblewrap");
        const all = Object.values(seen.results).join("\n");
        for (const leak of [...RELAY_ONLY, seen.bobMark]) {
          assert.ok(!all.includes(leak), `${leak} reached alice's model:\n${all}`);
        }
        // Bob's folder is named only where alice named it herself (cat's "No such file").
        for (const name of ["env", "ancestors", "lsRoot", "readRoot"]) {
          assert.ok(!seen.results[name]!.includes(seen.bobId), `bob's folder in ${name}`);
        }
        assert.match(seen.results.env!, new RegExp(`HOME=\\S*/tenants/${seen.aliceId}/home`));
        assert.match(seen.results.lsRoot!, new RegExp(seen.aliceId), "her own folder only");
      });
    }

    await t.step("without a sandbox: env is clean, but bob's files and /proc are not", async () => {
      const seen = await run(cli, "none");
      for (const leak of [...RELAY_ONLY, seen.bobMark]) {
        assert.ok(!seen.results.env!.includes(leak), `${leak} in alice's Bash(env)`);
      }
      assert.match(seen.results.env!, new RegExp(`HOME=\\S*/tenants/${seen.aliceId}/home`));
      // The trust model without isolation: the same OS user reads what the relay's user can.
      assert.ok(seen.results.catBob!.includes(seen.bobMark), "bob's transcript, by cat");
      assert.ok(seen.results.lsRoot!.includes(seen.bobId), "bob's folder, by ls");
      assert.ok(seen.results.ancestors!.includes(SECRET), "the relay's environment, by /proc");
    });
  },
);
