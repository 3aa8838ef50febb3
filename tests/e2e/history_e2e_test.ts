/**
 * Session history against the real `claude` 2.1.332 and the files it writes:
 * turns run through `DuplexSession` (fake Messages API), then the history
 * functions list, read, rename, tag, fork and delete them, and the real CLI
 * resumes what they changed: by the new title (`--resume <title>`), and the
 * fork by its id, where the model sees only the conversation up to the fork
 * point. A working directory longer than 200 characters checks the folder
 * name we compute against the one the CLI made. The last scenario drives the
 * CLI's own interactive `--resume` picker in tmux (a private server on a
 * socket of the sandbox, ended with the test) and reads the renamed title and
 * the tag on its screen, and that it hides sessions run through the SDK
 * protocol (ours included); without tmux it is skipped loudly, and fails on CI.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession, type SessionEvent } from "../../mod.ts";
import {
  deleteSession,
  forkSession,
  getSessionInfo,
  getSessionMessages,
  listSessions,
  renameSession,
  tagSession,
} from "../../adapters/subprocess/history/mod.ts";
import { e2eTest, type Sandbox, sandboxedCli, waitUntil, withSandbox } from "./_harness.ts";
import { sentToModel } from "./fake_api.ts";
import { Terminal, tmuxAvailable } from "./_terminal.ts";
import { unavailableStep } from "../_unavailable.ts";
import { texts } from "../adapters/subprocess/_history_fixtures.ts";

const TURN = { timeoutMs: 30_000 } as const;

/** Runs prompts in one CLI process; returns the session id and the live assistant frames. */
async function runTurns(
  cli: string,
  box: Sandbox,
  prompts: readonly string[],
  resume?: string,
): Promise<{ sessionId: string; assistantUuids: string[]; cost: number }> {
  await using session = await DuplexSession.start({
    transport: sandboxedCli(cli, box, resume === undefined ? {} : { resume }),
    onPermission: () => ({ behavior: "allow" }),
  });
  const assistantUuids: string[] = [];
  let cost = 0;
  for (const prompt of prompts) {
    const turn = await session.send(prompt, TURN);
    assert.equal(turn.result.isError, false, turn.result.text);
    cost += turn.result.costUsd;
    for (const event of turn.events as readonly SessionEvent[]) {
      if (event.type === "assistant" && event.uuid) assistantUuids.push(event.uuid);
    }
  }
  const sessionId = session.sessionId;
  assert.ok(sessionId, "the CLI reported a session id");
  await session.close();
  return { sessionId, assistantUuids, cost };
}

e2eTest(
  "history: list, read, rename, tag, fork and resume, delete on the CLI's files",
  async (t, cli) => {
    await withSandbox(async (box) => {
      const configDir = `${box.home}/.claude`;
      const where = { configDir, dir: box.work };
      const first = await runTurns(cli, box, [
        "first history prompt",
        "[[tool:bash:echo hi]]",
        "third history prompt",
      ]);
      const id = first.sessionId;

      await t.step(
        "listSessions() finds what the CLI wrote, with its prompts and cost",
        async () => {
          const [info, ...others] = await listSessions(where);
          assert.equal(others.length, 0);
          assert.equal(info?.sessionId, id);
          assert.equal(info?.firstPrompt, "first history prompt");
          assert.equal(info?.lastPrompt, "third history prompt");
          assert.equal(info?.summary, "third history prompt");
          assert.equal(info?.cwd, await Deno.realPath(box.work));
          assert.equal(info?.skippedLines, 0);
          assert.ok(
            info?.costUsd !== undefined && Math.abs(info.costUsd - first.cost) < 1e-9,
            `recorded ${info?.costUsd}, the turns cost ${first.cost}`,
          );
          assert.deepEqual(await getSessionInfo(id, where), info);
        },
      );

      await t.step(
        "getSessionMessages() returns the conversation; assistant uuids match the live frames",
        async () => {
          const messages = await getSessionMessages(id, where);
          assert.deepEqual(texts(messages), [
            "user:first history prompt",
            "assistant:Echo: first history prompt",
            "user:[[tool:bash:echo hi]]",
            "assistant:tool:Bash",
            "user:result:hi",
            "assistant:Tool said: hi",
            "user:third history prompt",
            "assistant:Echo: third history prompt",
          ]);
          assert.deepEqual(
            messages.filter((m) => m.type === "assistant").map((m) => m.uuid),
            first.assistantUuids,
          );
        },
      );

      await t.step("renameSession(): the CLI resumes the session by its new title", async () => {
        await renameSession(id, "History under test", where);
        assert.equal((await getSessionInfo(id, where))?.summary, "History under test");
        const from = box.api.messageRequests.length;
        const resumed = await runTurns(cli, box, ["after the rename"], "History under test");
        assert.equal(resumed.sessionId, id, "--resume <title> found the renamed session");
        assert.match(sentToModel(box.api, from), /third history prompt/, "with its history");
        assert.equal((await getSessionInfo(id, where))?.customTitle, "History under test");
      });

      await t.step(
        "title and tag set while a CLI has the session open: later turns keep them",
        async () => {
          await using session = await DuplexSession.start({
            transport: sandboxedCli(cli, box, { resume: id }),
          });
          await session.send("before the tag", TURN);
          await tagSession(id, "e2e-tag", where);
          await renameSession(id, "History retitled", where);
          await session.send("after the tag", TURN);
          await session.send("and once more", TURN);
          await session.close();
          const info = await getSessionInfo(id, where);
          assert.equal(info?.tag, "e2e-tag");
          assert.equal(info?.customTitle, "History retitled");
          assert.equal(info?.lastPrompt, "and once more");
          await tagSession(id, null, where);
          assert.equal((await getSessionInfo(id, where))?.tag, undefined, "null clears the tag");
        },
      );

      await t.step(
        "forkSession() + resume: the model sees the fork up to its point only",
        async () => {
          const messages = await getSessionMessages(id, where);
          const firstAnswer = messages[1]!;
          const fork = await forkSession(id, { ...where, upToMessageId: firstAnswer.uuid });
          const sourceBefore = await Deno.readTextFile((await getSessionInfo(id, where))!.file);
          const from = box.api.messageRequests.length;
          const resumed = await runTurns(cli, box, ["continue the fork"], fork.sessionId);
          assert.equal(resumed.sessionId, fork.sessionId);
          const sent = sentToModel(box.api, from);
          assert.match(sent, /first history prompt/);
          assert.doesNotMatch(
            sent,
            /third history prompt|after the rename|after the tag|tool:bash/,
          );
          assert.deepEqual(texts(await getSessionMessages(fork.sessionId, where)), [
            "user:first history prompt",
            "assistant:Echo: first history prompt",
            "user:continue the fork",
            "assistant:Echo: continue the fork",
          ]);
          const info = await getSessionInfo(fork.sessionId, where);
          assert.equal(info?.forkedFrom, id);
          assert.equal(info?.summary, "History retitled (fork)");
          assert.equal(
            await Deno.readTextFile((await getSessionInfo(id, where))!.file),
            sourceBefore,
          );
        },
      );

      await t.step("deleteSession(): gone from the list, the source stays", async () => {
        const [fork] = (await listSessions(where)).filter((s) => s.forkedFrom === id);
        assert.ok(fork);
        await deleteSession(fork.sessionId, where);
        assert.deepEqual((await listSessions(where)).map((s) => s.sessionId), [id]);
      });

      await t.step(
        "a link named like a transcript is not listed, nor followed by delete",
        async () => {
          const info = (await getSessionInfo(id, where))!;
          const link = `${
            info.file.slice(0, info.file.lastIndexOf("/"))
          }/${crypto.randomUUID()}.jsonl`;
          await Deno.symlink(info.file, link);
          assert.deepEqual((await listSessions(where)).map((s) => s.sessionId), [id]);
          const linked = link.slice(link.lastIndexOf("/") + 1, -".jsonl".length);
          assert.equal(await getSessionInfo(linked, where), undefined);
          await assert.rejects(deleteSession(linked, where));
          assert.ok((await Deno.stat(info.file)).isFile, "the link's target is untouched");
        },
      );
    });
  },
);

e2eTest(
  "history: a working directory whose folder name the CLI cuts and hashes",
  async (_t, cli) => {
    await withSandbox(async (box) => {
      const long = `${box.work}/${"a".repeat(70)}/${"b".repeat(70)}/${"c".repeat(70)}`;
      await Deno.mkdir(long, { recursive: true });
      const { sessionId } = await runTurns(cli, { ...box, work: long }, ["from deep inside"]);
      const where = { configDir: `${box.home}/.claude`, dir: long };
      const [info] = await listSessions(where);
      assert.equal(info?.sessionId, sessionId, "the folder name we compute is the CLI's");
      const folder = info.file.split("/").at(-2)!;
      assert.ok(folder.length > 200 && folder.length < 220, folder);
      assert.deepEqual(await listSessions({ ...where, dir: box.work }), []);
    });
  },
);

e2eTest(
  "history: the CLI's own --resume picker shows a renamed title and the tag",
  async (t, cli) => {
    const missing = await tmuxAvailable();
    if (missing !== undefined) return await unavailableStep(t, "the picker check", missing);
    await withSandbox(async (box) => {
      const where = { configDir: `${box.home}/.claude`, dir: box.work };
      await runInteractiveTurn(cli, box, "hello from a person", where.configDir);
      const [session] = await listSessions(where);
      assert.ok(session, "the interactive session was written");
      const program = await runTurns(cli, box, ["from a program"]);
      await renameSession(program.sessionId, "Programmatic title", where);
      assert.equal((await listSessions(where)).length, 2, "we list both");

      await t.step("the picker lists the title and #tag our functions appended", async () => {
        await renameSession(session.sessionId, "Picked from the list", where);
        await tagSession(session.sessionId, "e2e", where);
        const screen = await openPicker(cli, box, (text) => text.includes("Picked from the list"));
        assert.match(screen, /Picked from the list/);
        assert.match(screen, /#e2e/);
        assert.doesNotMatch(screen, /hello from a person/, "the title replaces the prompt");
        assert.doesNotMatch(screen, /Programmatic title/, "the picker hides SDK sessions");
      });

      await t.step("after tagSession(null) the picker shows no tag", async () => {
        await tagSession(session.sessionId, null, where);
        const screen = await openPicker(cli, box, (text) => text.includes("Picked from the list"));
        assert.doesNotMatch(screen, /#e2e/);
      });
    });
  },
);

// ---------------------------------------------------------------------------
// The CLI's terminal interface, driven through tmux (a private server per call)

/** `argv` in a 160x45 tmux pane of a private server on a socket of the sandbox. */
function openTerminal(box: Sandbox, argv: readonly string[]): Promise<Terminal> {
  return Terminal.open({
    argv,
    cwd: box.work,
    env: box.env,
    socket: `${box.root}/tmux.sock`,
    size: [160, 45],
  });
}

/** Lets the interactive CLI start without questions: onboarding done, the key and the folder trusted. */
async function trustSandbox(box: Sandbox): Promise<void> {
  const work = await Deno.realPath(box.work);
  await Deno.writeTextFile(
    `${box.home}/.claude.json`,
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      customApiKeyResponses: { approved: [box.env.ANTHROPIC_API_KEY], rejected: [] },
      projects: { [work]: { hasTrustDialogAccepted: true } },
    }),
  );
}

/** A person's turn in the CLI's terminal interface: type a prompt, see the answer, `/exit`. */
async function runInteractiveTurn(
  cli: string,
  box: Sandbox,
  prompt: string,
  configDir: string,
): Promise<void> {
  await trustSandbox(box);
  await using term = await openTerminal(box, [cli]);
  await term.until((text) => /shift\+tab|for shortcuts/.test(text), "the prompt box");
  await term.typeLine(prompt);
  await term.until((text) => text.includes(`Echo: ${prompt}`), "the answer");
  await term.typeLine("/exit");
  await term.until((text) => /\[exited \d+\]$/.test(text), "the CLI exit", 15_000);
  await waitUntil(async () => (await listSessions({ configDir })).length > 0, "the transcript");
}

/** Opens `claude --resume` (the session picker) and returns its screen once `pred` holds. */
async function openPicker(
  cli: string,
  box: Sandbox,
  pred: (text: string) => boolean,
): Promise<string> {
  await using term = await openTerminal(box, [cli, "--resume"]);
  return await term.until((text) => text.includes("Resume session") && pred(text), "the picker");
}
