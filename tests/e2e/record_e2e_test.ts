/**
 * `record()` on the real CLI: a session of two turns and a permission,
 * recorded in the sandbox (redacted), then replayed by `replay()` to the
 * same code, which passes with no CLI running; a different decision fails
 * with the diff.
 */
import assert from "node:assert/strict";
import { DuplexError, DuplexSession, type TransportFactory } from "../../mod.ts";
import { parseTranscript, record, type Redaction, replay } from "../../src/testing/mod.ts";
import { e2eTest, exists, processAlive, sandboxedCli, withSandbox } from "./_harness.ts";

const TOOL_PROMPT = "please [[tool:bash:touch made-by-tool.txt && echo tool-ran]]";

interface Outcome {
  texts: string[];
  tools: string[];
  pid: number | undefined;
  kind: string;
}

/** The code under test: two turns, the second asks to run Bash; `allow` decides. */
async function conversation(transport: TransportFactory, allow = true): Promise<Outcome> {
  const tools: string[] = [];
  await using session = await DuplexSession.start({
    transport,
    onPermission(request) {
      tools.push(`${request.toolName}: ${String(request.input.command)}`);
      return allow ? { behavior: "allow" } : { behavior: "deny", message: "Not in tests" };
    },
  });
  const first = await session.send("hello there", { timeoutMs: 30_000 });
  const second = await session.send(TOOL_PROMPT, { timeoutMs: 30_000 });
  return {
    texts: [first.result.text, second.result.text],
    tools,
    pid: session.pid,
    kind: session.transportInfo.kind,
  };
}

e2eTest("record(): a real-CLI session replays to the same code with no CLI", async (t, cli) => {
  await withSandbox(async (box) => {
    const path = `${box.root}/recorded.ndjson`;
    const root = await Deno.realPath(box.root);
    const redact: Redaction[] = [{ match: root, replace: "/sandbox" }, {
      match: box.root,
      replace: "/sandbox",
    }];
    const live = await conversation(
      record(sandboxedCli(cli, box), { to: (await Deno.create(path)).writable, redact }),
    );

    await t.step("the live session ran two turns and the permitted tool", async () => {
      assert.equal(live.kind, "subprocess");
      assert.equal(live.texts[0], "Echo: hello there");
      assert.match(live.texts[1]!, /^Tool said: tool-ran/);
      assert.deepEqual(live.tools, ["Bash: touch made-by-tool.txt && echo tool-ran"]);
      assert.ok(await exists(`${box.work}/made-by-tool.txt`));
      assert.ok(live.pid !== undefined && !(await processAlive(live.pid)), "the CLI is gone");
    });

    const text = await Deno.readTextFile(path);
    await t.step("the transcript holds the session, with the sandbox's path hidden", () => {
      // In the shared fixtures' format: every line an entry parseTranscript accepts.
      const entries = parseTranscript(text);
      assert.equal(entries.length, text.trimEnd().split("\n").length);
      assert.deepEqual(entries.map((e) => e.seq), entries.map((_, i) => i));
      assert.equal(entries[0]!.msg!.event, "spawn");
      assert.equal(entries[0]!.msg!.transport, "subprocess");
      assert.deepEqual(entries.at(-1)!.msg, { event: "exit", code: 0, signal: null });
      const stdin = entries.filter((e) => e.dir === "stdin").map((e) => e.msg!.type);
      assert.deepEqual(stdin.filter((type) => type !== "control_request"), [
        "user",
        "user",
        "control_response",
      ]);
      const subtypes = entries.map((e) =>
        (e.msg?.request as { subtype?: unknown } | undefined)?.subtype
      );
      assert.ok(subtypes.includes("can_use_tool"));
      assert.ok(text.includes('"cwd":"/sandbox/work"'), "the CLI's cwd is recorded, redacted");
      assert.ok(!text.includes(box.root) && !text.includes(root), "no sandbox path is left");
    });

    await Deno.remove(`${box.work}/made-by-tool.txt`);
    await t.step("the replay answers the same code the same way, with no CLI", async () => {
      const cliless = replay(path, { redact });
      const again = await conversation(cliless.transport);
      assert.deepEqual(again.texts, live.texts);
      assert.deepEqual(again.tools, live.tools);
      assert.equal(again.kind, "replay");
      assert.equal(again.pid, undefined, "no process was started");
      assert.equal(await exists(`${box.work}/made-by-tool.txt`), false, "no tool ran");
      cliless.verify();
    });

    await t.step("a different decision fails with the diff at the decision", async () => {
      const cliless = replay(path, { redact, waitTimeoutMs: 3000 });
      await assert.rejects(conversation(cliless.transport, false), DuplexError);
      assert.throws(() => cliless.verify(), (error: unknown) => {
        assert.ok(error instanceof DuplexError && error.kind === "protocol");
        assert.match(error.message, /first difference at response\.response\.behavior/);
        assert.match(error.message, /^ {2}- +"behavior": "allow",$/m);
        assert.match(error.message, /^ {2}\+ +"behavior": "deny",$/m);
        assert.match(error.message, /recorded: transcript line \d+ \(seq \d+\)/);
        return true;
      });
    });
  });
});
