/**
 * `deno task demo` in a real terminal: the chat runs in a detached tmux
 * session (fixed size, private server), typed at with `send-keys` and read
 * with `capture-pane`, twice: against the built-in stand-in (no CLI), and
 * against the real CLI offline (the sandbox and the fake Messages API). Each
 * step asserts what the screen shows: the streamed answer, a permission
 * prompt answered "always" (then not asked again) and "no", Ctrl-C during a
 * slow turn (the answer cut, the prompt back, the session still usable),
 * `/model`, `/mode`, `/cost`, `/quit`; and that no CLI is left. With stdin
 * not a terminal, the demo runs its scripted tour instead, which must run
 * in order to its end and exit 0 (that needs no tmux).
 *
 * Without tmux the tests are skipped loudly; with `CI=true` they fail.
 *
 * @module
 */

import assert from "node:assert/strict";
import { e2eTest, exists, processAlive, type Sandbox, withSandbox } from "./_harness.ts";
import { after, Terminal, tmuxAvailable } from "./_terminal.ts";
import { unavailableStep } from "../_unavailable.ts";

const root = new URL("../../", import.meta.url);
const SLOW = "[[slow]] one two three four five six seven eight nine ten eleven twelve " +
  "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty, the end";

/**
 * The README's command, `npx -y deno@… task demo`, as a person runs it (npx,
 * then `deno task`, then the demo, each in the terminal's process group, so
 * one Ctrl-C reaches the demo more than once), with this checkout's deno.json
 * named since the test starts it in a folder of its own: the demo works in the
 * folder it was started from (`INIT_CWD`).
 */
async function demoArgv(): Promise<string[]> {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const command = /^npx -y (deno@[\d.]+) task demo\b/m.exec(readme);
  assert.ok(command, "the README names its demo command");
  return [
    "npx",
    "-y",
    command[1]!,
    "task",
    "--config",
    new URL("deno.json", root).pathname,
    "demo",
  ];
}

/**
 * What npx and Deno need to find what they already installed (the Deno
 * binary, the packages deno.json pins) whatever HOME the test sets.
 */
function npxEnv(): Record<string, string> {
  const home = Deno.env.get("HOME") ?? "/root";
  return {
    npm_config_cache: Deno.env.get("npm_config_cache") ?? `${home}/.npm`,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? `${home}/.cache/deno`,
    DENO_NO_UPDATE_CHECK: "1",
  };
}

Deno.test("demo with stdin not a terminal: the scripted tour runs to its end and exits 0", async () => {
  const [bin, ...args] = await demoArgv();
  const output = await new Deno.Command(bin!, {
    args,
    cwd: new URL(".", root).pathname,
    env: { NO_COLOR: "1", ...npxEnv() },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, `${stdout}\n${new TextDecoder().decode(output.stderr)}`);
  const steps = [
    /^1\. A plain turn, streamed:\n {2}\[stream\] Echo: Say hi\.\n {3}result: Echo: Say hi\. \(cost \$0\.0003\)$/m,
    /^2\. A tool call answered by code:\n {2}\[permission\] Bash wants: rm -rf build -> allow, rewritten$/m,
    /^ {3}result: Tool said: .*it would have run: echo 'rm skipped by host'\)$/m,
    /^3\. A tool call answered later by a person:\n {2}\[permission\] Bash: touch notes\.md deferred/m,
    /^ {3}\(a person clicks 'Allow' for Bash 300 ms later\)$/m,
    /^ {3}result: Tool said: .*it would have run: touch notes\.md\)$/m,
    /^4\. A slow turn, cancelled with AbortSignal\.timeout\(200\):$/m,
    /^ {3}send rejected with TimeoutError; the CLI was interrupted$/m,
    /^ {3}next turn works: Echo: Still there\?$/m,
    /^ {2}\[event\] exit: completed\nClosed: completed\.$/m,
  ];
  let from = 0;
  for (const step of steps) {
    const at = stdout.slice(from).search(step);
    assert.ok(at >= 0, `${step} after offset ${from} in:\n${stdout}`);
    from += at;
  }
});

/** Skips loudly (or fails on CI) when tmux is missing; returns whether to go on. */
async function needTmux(t: Deno.TestContext): Promise<boolean> {
  const missing = await tmuxAvailable();
  if (missing === undefined) return true;
  await unavailableStep(t, "the demo in tmux", missing);
  return false;
}

const STATUS = /\(\d+\.\d s, \$\d\.\d{4}; total \$\d\.\d{4}[^)]*\)/;
const PERMISSION = /\[y\]es, \[n\]o, \[a\]lways:$/;

/** Types `line` at the chat's prompt and waits for the turn's status line; returns what followed. */
async function turn(term: Terminal, line: string, what: string): Promise<string> {
  await term.typeLine(line);
  return await answerTo(term, `you> ${line}`, what);
}

/** Waits until a status line follows `marker`; returns what followed it. */
async function answerTo(term: Terminal, marker: string, what: string): Promise<string> {
  return after(await term.until((s) => STATUS.test(after(s, marker)), what), marker);
}

/** The chat, step by step, the same against either backend. */
async function drive(t: Deno.TestContext, term: Terminal): Promise<void> {
  const always = "[[tool:bash:touch tmux-always.txt]]";
  await t.step("a prompt gets its answer streamed, then time and cost", async () => {
    const shown = await turn(term, "hello from tmux", "the answer");
    assert.match(shown, /^\nclaude> Echo: hello from tmux\n {2}\(\d+\.\d s, \$0\.\d{4}; total/);
  });

  await t.step("a permission prompt answered 'always' runs the tool; not asked again", async () => {
    await term.typeLine(always);
    const asked = after(await term.until((s) => PERMISSION.test(s), "the question"), always);
    assert.match(
      asked,
      /\[Bash\] touch tmux-always\.txt\n {2}Allow Bash: touch tmux-always\.txt\?/,
    );
    await term.typeLine("a");
    const done = await answerTo(term, "[a]lways: a", "the tool's turn");
    assert.match(done, /allowed, and always for this session: touch tmux-always\.txt/);
    assert.match(done, /\nclaude> Tool said: /);
    const again = await turn(term, `again ${always}`, "the tool's second turn");
    assert.match(again, /\[Bash\] touch tmux-always\.txt\n.*\nclaude> Tool said: /);
    assert.doesNotMatch(again, /Allow Bash/, "an always-allowed tool is not asked again");
  });

  await t.step("a permission prompt answered 'n' denies the tool", async () => {
    await term.typeLine("[[tool:bash:touch tmux-denied.txt]]");
    await term.until((s) => PERMISSION.test(s), "the second question");
    await term.typeLine("n");
    const done = await answerTo(term, "[a]lways: n", "the denied turn");
    assert.match(done, /^\n {2}denied Bash\n/);
    assert.match(done, /\nclaude> Tool failed: /);
  });

  await t.step("Ctrl-C during a slow turn interrupts it; the prompt comes back", async () => {
    await term.typeLine(SLOW);
    const streaming = after(
      await term.until((s) => /claude> Echo: \[\[slow\]\] one two/.test(after(s, SLOW)), "words"),
      SLOW,
    );
    assert.doesNotMatch(streaming, /the end/, "the answer is still streaming");
    await term.press("C-c");
    const cut = after(
      await term.until(
        (s) => /\(interrupted after [\d.]+ s; total \$[\d.]+\)\nyou>$/.test(s),
        "^C",
      ),
      SLOW,
    );
    assert.match(cut, /\^C: interrupting the turn \(Ctrl-C again to quit\)/);
    assert.doesNotMatch(cut, /the end/, "the answer was cut short");
    assert.match(await turn(term, "still there?", "the next turn"), /claude> Echo: still there\?/);
  });

  await t.step("Ctrl-C while a permission question waits withdraws it", async () => {
    await new Promise((resolve) => setTimeout(resolve, 2100)); // a new Ctrl-C, not a second one
    await term.typeLine("[[tool:bash:touch tmux-withdrawn.txt]]");
    await term.until((s) => PERMISSION.test(s), "the third question");
    await term.press("C-c");
    const withdrawn = after(
      await term.until((s) => /\(interrupted after [\d.]+ s[^)]*\)\nyou>$/.test(s), "^C"),
      "[[tool:bash:touch tmux-withdrawn.txt]]",
    );
    assert.match(withdrawn, /\^C: interrupting the turn[^\n]*\n {2}\(the request was withdrawn\)/);
    assert.match(await turn(term, "after that", "a turn after"), /claude> Echo: after that/);
  });

  await t.step("/model, /mode and /cost", async () => {
    await term.typeLine("/model sonnet");
    await term.until((s) => /model: sonnet \(from the next turn\)\nyou>$/.test(s), "/model");
    const sonnet = await turn(term, "with sonnet", "a turn on sonnet");
    assert.match(sonnet, /; \S*sonnet\S*\)/, "the turn ran on the model asked for");
    await term.typeLine("/mode acceptEdits");
    await term.until((s) => /permission mode: acceptEdits\nyou>$/.test(s), "/mode");
    await term.typeLine("/cost");
    const cost = after(await term.until((s) => /in turns\nyou>$/.test(s), "/cost"), "you> /cost");
    assert.match(cost, /7 turns \(2 interrupted\), \$0\.\d{4} in all, \d+ input and \d+ output/);
  });

  await t.step("/quit closes claude and exits 0", async () => {
    await term.typeLine("/quit");
    const end = after(await term.until((s) => /\[exited \d+\]$/.test(s), "the exit"), "you> /quit");
    // The demo exits 0; npx, above `deno task`, exits 130 once it has seen a SIGINT (the Ctrl-C
    // steps above), whatever its child's code: npm's own behaviour, as a person sees it too.
    assert.match(end, /^\nClosing claude \(bye\)\.\.\.\nClosed: completed\.\n\[exited 130\]$/);
  });
}

/** Runs `fn` with the demo in a terminal, no claude to be found: it runs its stand-in. */
async function withStandIn(fn: (term: Terminal) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "duplex-demo-" });
  try {
    await using term = await Terminal.open({
      socket: `${dir}/tmux.sock`,
      cwd: dir,
      argv: await demoArgv(),
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: dir,
        CLAUDE_CLI: `${dir}/no-claude-here`,
        NO_COLOR: "1",
        ...npxEnv(),
      },
    });
    await fn(term);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("demo in tmux: the chat against the built-in stand-in", async (t) => {
  if (!(await needTmux(t))) return;
  await withStandIn(async (term) => {
    const banner = await term.until((s) => s.endsWith("you>"), "the banner");
    assert.match(
      banner,
      /No claude that can answer \(.*no-claude-here \(from CLAUDE_CLI\) is missing\): using the built-in stand-in\./,
    );
    await drive(t, term);
  });
});

Deno.test("demo in tmux: one Ctrl-C during a turn interrupts it and never quits, five times", async (t) => {
  if (!(await needTmux(t))) return;
  await withStandIn(async (term) => {
    await term.until((s) => s.endsWith("you>"), "the banner");
    for (let round = 1; round <= 5; round++) {
      const prompt = `${SLOW} (round ${round})`;
      await term.typeLine(prompt);
      await term.until((s) => /claude> Echo: \[\[slow\]\] one/.test(after(s, prompt)), "words");
      await term.press("C-c");
      const cut = after(
        await term.until(
          (s) => /\(interrupted after [\d.]+ s[^)]*\)\nyou>$/.test(after(s, prompt)),
          "^C",
        ),
        prompt,
      );
      assert.match(cut, /\^C: interrupting the turn/);
      assert.doesNotMatch(cut, /Closing claude|exited/, `round ${round}: one press quit the demo`);
      // The next press must be a new one, outside the window in which a second press quits.
      await new Promise((resolve) => setTimeout(resolve, 2100));
    }
    assert.match(await turn(term, "still here", "a last turn"), /claude> Echo: still here/);
  });
});

/** The demo in a terminal in the sandbox, with `env`; returns it once its banner and prompt show. */
async function openInSandbox(
  box: Sandbox,
  env: Record<string, string>,
): Promise<{ term: Terminal; banner: string }> {
  const term = await Terminal.open({
    socket: `${box.root}/tmux.sock`,
    cwd: box.work,
    argv: await demoArgv(),
    env: { ...env, NO_COLOR: "1", ...npxEnv() },
  });
  try {
    return { term, banner: await term.until((s) => s.endsWith("you>"), "the banner", 30_000) };
  } catch (error) {
    await term[Symbol.asyncDispose]();
    throw error;
  }
}

/** The processes whose environment names the sandbox's home (tmux's own excepted). */
async function sandboxProcesses(box: Sandbox): Promise<string[]> {
  const ps = await new Deno.Command("ps", { args: ["-eww", "-o", "pid=,args=", "e"] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .filter((row) => row.includes(`HOME=${box.home}`) && !row.includes("tmux"));
}

e2eTest("demo in tmux: the chat against the real CLI, offline", async (t, cli) => {
  if (!(await needTmux(t))) return;
  await withSandbox(async (box: Sandbox) => {
    const { term, banner } = await openInSandbox(box, { ...box.env, CLAUDE_CLI: cli });
    await using _term = term;
    const pid = Number(/Talking to claude 2\.1\.332 \(.*, pid (\d+)\)/.exec(banner)?.[1]);
    assert.ok(pid > 0, banner);
    assert.ok(await processAlive(pid), "the CLI runs");
    await drive(t, term);
    assert.ok(await exists(`${box.work}/tmux-always.txt`), "the allowed tool ran");
    assert.equal(await exists(`${box.work}/tmux-denied.txt`), false, "the denied tool did not");
    assert.equal(await exists(`${box.work}/tmux-withdrawn.txt`), false, "nor the withdrawn one");
    assert.equal(await processAlive(pid), false, "no CLI is left");
    assert.deepEqual(await sandboxProcesses(box), [], "no process of the sandbox is left");
  }, { slowDelayMs: 300 });
});

e2eTest("demo in tmux: Ctrl-C twice quits and ends the CLI", async (t, cli) => {
  if (!(await needTmux(t))) return;
  await withSandbox(async (box: Sandbox) => {
    const { term, banner } = await openInSandbox(box, { ...box.env, CLAUDE_CLI: cli });
    await using _term = term;
    const pid = Number(/, pid (\d+)\)/.exec(banner)?.[1]);
    assert.ok(pid > 0 && await processAlive(pid), `the banner names the running CLI: ${banner}`);
    assert.match(await turn(term, "one turn", "a turn"), /claude> Echo: one turn/);
    await term.press("C-c");
    await term.until((s) => /Ctrl-C again within 2 s quits, or type \/quit\)\nyou>$/.test(s), "^C");
    await new Promise((resolve) => setTimeout(resolve, 400)); // a second press, not an echo
    await term.press("C-c");
    const end = await term.until((s) => /\[exited \d+\]$/.test(s), "the exit");
    assert.match(
      end,
      /Closing claude \(Ctrl-C twice\)\.\.\.\nClosed: completed\.\n\[exited 130\]$/,
    );
    assert.equal(await processAlive(pid), false, "the CLI is gone");
  });
});

e2eTest(
  "demo in tmux: a claude without a key is not used; the stand-in answers",
  async (t, cli) => {
    if (!(await needTmux(t))) return;
    await withSandbox(async (box: Sandbox) => {
      const { ANTHROPIC_API_KEY: _key, ...env } = box.env;
      const { term, banner } = await openInSandbox(box, { ...env, CLAUDE_CLI: cli });
      await using _term = term;
      assert.match(
        banner,
        /No claude that can answer \(claude 2\.1\.332 at .* has no API key or login \(run claude once\)\): using the built-in stand-in\./,
      );
      assert.match(await turn(term, "hello", "a turn"), /claude> Echo: hello\n.*; stand-in\)/);
      await term.press("C-d");
      const end = await term.until((s) => /\[exited \d+\]$/.test(s), "the exit");
      assert.match(
        end,
        /Closing claude \(end of input\)\.\.\.\nClosed: completed\.\n\[exited 0\]$/,
      );
      assert.deepEqual(await sandboxProcesses(box), [], "the CLI that was tried is gone");
    });
  },
);
