/**
 * examples/web_approvals in a real browser: the app runs as its own process
 * (against the stand-in, and against the real CLI offline), headless
 * Chromium (the Debian package) opens its page, and the test drives it
 * through the DevTools protocol as a person would: it types a prompt, presses
 * Enter, waits for the permission card, clicks Allow or Deny, and reads what
 * the page shows. A card shows what the CLI sent for it: its own sentence,
 * the ask rule that asked, "Always allow" only where the CLI offers a rule
 * and does not suppress it, Deny as the default (focused, Enter denies)
 * where the CLI says so. A request made while no page is open must show
 * when one opens, and "Always allow" on it saves the CLI's rule; Ctrl-C must
 * end the app, its CLI and nothing else. The stand-in run
 * saves the screenshot the README shows (docs/web_approvals.png).
 */
import assert from "node:assert/strict";
import { Chromium } from "./runtimes/_chromium.ts";
import { projectPath, runtimeStatus, runtimeTest, tempDir } from "./runtimes/_runtimes.ts";
import { exists, processAlive, waitUntil, withinLimit, withSandbox } from "./_harness.ts";
import { unavailableTest } from "../_unavailable.ts";
import { api, type App, checkDefences, startApp } from "./_web_approvals_app.ts";
import { Tab } from "./_web_tab.ts";

const SCREENSHOT = projectPath("docs/web_approvals.png");
const LIMIT_MS = 120_000;
/** Markup in a prompt: the page must show it as text, never make elements of it. */
const MARKUP = "<img src=x onerror=\"document.title='pwned'\"><b>bold</b>";
/** Markup as an MCP server's configured name (no `:` or `]`: it is written into a trigger). */
const MARKUP_NAME = "<img src=x onerror=\"document.title='pwned'\">";

/** Prompts and what the page must show for them, per backend. */
interface Script {
  readonly allow: string;
  readonly allowCommand: string;
  readonly allowAnswer: RegExp;
  readonly allowEffect: () => Promise<void>;
  /** Text the answer holds while the card waits (streamed before the tool call), if any. */
  readonly beforeCard?: RegExp;
  readonly deny: string;
  /** The deny card: the CLI's sentence on it, and whether Deny is its default (Enter denies). */
  readonly denyCard: {
    readonly title: RegExp;
    readonly defaultToNo: boolean;
    readonly rule?: string;
  };
  readonly denyAnswer: RegExp;
  readonly denyEffect: () => Promise<void>;
  readonly later: string;
  readonly laterAnswer: RegExp;
  /** An MCP tool's call, whose card must name the server (untrusted text) and its source. */
  readonly mcp?: { readonly prompt: string; readonly server: string };
  /** What "Always allow" on the later card must have left behind. */
  readonly alwaysEffect: () => Promise<void>;
  readonly screenshot?: string;
}

const TURN_TEXT = `[...document.querySelectorAll(".turn")].at(-1)?.querySelector(".answer")
  ?.textContent ?? ""`;
const OPEN_CARD = `document.querySelector(".card:not(.settled)")?.dataset.id ?? ""`;
const RESULT = `[...document.querySelectorAll(".turn")].at(-1)?.querySelector(".result")
  ?.textContent ?? ""`;

async function ask(tab: Tab, prompt: string): Promise<string> {
  await tab.waitFor(`!document.getElementById("send").disabled`, "the Send button enabled");
  await tab.click("#prompt");
  await tab.type(prompt);
  await tab.pressEnter();
  return String(await tab.waitFor(OPEN_CARD, "a permission card"));
}

/** A selector inside the card of request `id`. */
function inCard(id: string, selector = ""): string {
  return `.card[data-id=${JSON.stringify(id)}] ${selector}`.trim();
}

async function cardText(tab: Tab, id: string): Promise<string> {
  return String(
    await tab.evaluate(`document.querySelector('.card[data-id=${JSON.stringify(id)}]')
    .textContent`),
  );
}

async function scenario(t: Deno.TestContext, chromium: string, app: App, script: Script) {
  await using dir = await tempDir("duplex-web-approvals-");
  await using browser = await Chromium.start(chromium, dir.path);
  const { cdp } = browser;
  const bare = await Tab.open(cdp, `${app.origin}/`); // the URL without its token
  await bare.waitFor(
    `document.body.innerText.includes("Open the URL the server printed")`,
    "advice",
  );
  await bare.close();
  let tab = await Tab.open(cdp, app.url);

  await t.step("a typed prompt streams in, Allow on its card runs the tool", async () => {
    await tab.waitFor(`document.getElementById("status").className === "live"`, "connected");
    const id = await ask(tab, script.allow);
    const card = await cardText(tab, id);
    assert.match(card, /Bash wants to run/);
    assert.ok(card.includes(script.allowCommand), card);
    if (script.beforeCard) assert.match(String(await tab.evaluate(TURN_TEXT)), script.beforeCard);
    // An ordinary ask: "Always allow" offered (the CLI suggested a rule), no key approves.
    assert.equal(
      await tab.evaluate(`!!document.querySelector(${JSON.stringify(inCard(id, ".always"))})`),
      true,
    );
    assert.equal(await tab.evaluate(`document.activeElement?.closest(".card") ?? null`), null);
    assert.match(await cardText(tab, id), /Allow BashAlways allowDeny$/);
    await tab.click(inCard(id, ".allow"));
    const result = String(await tab.waitFor(RESULT, "the turn's result", 30_000));
    assert.match(result, /^✓ done · \$\d+\.\d{4} · \d+\.\d\d s · session \$\d+\.\d{4}$/);
    assert.match(String(await tab.evaluate(TURN_TEXT)), script.allowAnswer);
    assert.match(await cardText(tab, id), /Allowed/);
    const deltas = Number(await tab.evaluate(`document.querySelector(".turn").dataset.deltas`));
    assert.ok(deltas >= 3, `the answer streamed in ${deltas} deltas`);
    // The card took the place of the tool call it asked about.
    assert.equal(await tab.evaluate(`document.querySelectorAll(".turn .tool").length`), 0);
    await script.allowEffect();
  });

  await t.step("Deny on the card: the tool does not run and the answer says so", async () => {
    const id = await ask(tab, script.deny);
    const { title, defaultToNo, rule } = script.denyCard;
    const text = await cardText(tab, id);
    assert.match(text, title);
    if (rule) assert.ok(text.includes(`Asked by your rule ${rule}`), text);
    // The CLI suppressed the lasting rule: no "Always allow" on this card.
    assert.equal(
      await tab.evaluate(`!!document.querySelector(${JSON.stringify(inCard(id, ".always"))})`),
      false,
    );
    const focused = `document.activeElement === document.querySelector(${
      JSON.stringify(inCard(id, ".deny"))
    })`;
    assert.equal(
      await tab.evaluate(
        `!!document.querySelector(${JSON.stringify(inCard(id))}).classList.contains("default-no")`,
      ),
      defaultToNo,
    );
    assert.equal(
      await tab.evaluate(focused),
      defaultToNo,
      "Deny has the focus where it is the default",
    );
    if (script.screenshot) {
      await tab.waitFor(`${TURN_TEXT}.length > 0`, "the streamed text beside the card");
      // The same PNG each run: no blinking caret, fonts loaded, two frames painted.
      await tab.evaluate(
        `document.activeElement?.tagName === "TEXTAREA" && document.activeElement.blur();
        document.fonts.ready.then(() =>
        new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))`,
      );
      await Deno.mkdir(projectPath("docs"), { recursive: true });
      const png = await tab.screenshot();
      const size = new DataView(png.buffer, png.byteOffset + 16, 8); // IHDR: width, height
      assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
      assert.deepEqual([size.getUint32(0), size.getUint32(4)], [960, 760]);
      await Deno.writeFile(script.screenshot, png);
    }
    if (defaultToNo) {
      // Enter gives the default: Deny. Checked first, so a wrong focus can never approve.
      assert.equal(await tab.evaluate(focused), true);
      await tab.pressEnter();
    } else await tab.click(inCard(id, ".deny"));
    const result = String(await tab.waitFor(RESULT, "the turn's result", 30_000));
    assert.match(result, /^✓ done/);
    assert.match(String(await tab.evaluate(TURN_TEXT)), script.denyAnswer);
    assert.match(await cardText(tab, id), /Denied/);
    assert.equal(
      await tab.evaluate(`document.querySelector(".turn:last-child .output.failed")
      ?.textContent`),
      "A person denied this from the web page",
    );
    await script.denyEffect();
  });

  await t.step("a request made while no page is open shows when one opens", async () => {
    await tab.close();
    await waitUntil(async () => (await api(app, "/api/state")).pages === 0, "the page gone");
    assert.deepEqual(await api(app, "/api/state"), { busy: false, pages: 0, pending: [] });
    const prompt = `${script.later} ${MARKUP}`;
    await api(app, "/api/send", { prompt });
    let pending: { id: string; toolName: string }[] = [];
    await waitUntil(
      async () => {
        pending = (await api(app, "/api/state")).pending as typeof pending;
        return pending.length === 1;
      },
      "the request waiting on the server",
      20_000,
    );
    assert.equal(pending[0]!.toolName, "Bash");
    tab = await Tab.open(cdp, app.url);
    assert.equal(await tab.waitFor(OPEN_CARD, "the waiting request's card"), pending[0]!.id);
    // The earlier turns come back too, with their results.
    assert.equal(await tab.evaluate(`document.querySelectorAll(".turn .result").length`), 2);
    // The prompt's markup is shown as text: no element made from it, no script run.
    const shown = await tab.evaluate(
      `[...document.querySelectorAll(".prompt")].at(-1).textContent`,
    );
    assert.equal(shown, prompt);
    assert.equal(await tab.evaluate(`document.querySelectorAll(".turn img, .turn b").length`), 0);
    assert.equal(await tab.evaluate(`document.title`), "claude · web approvals");
    await tab.click(inCard(pending[0]!.id, ".always"));
    await tab.waitFor(RESULT, "the turn's result", 30_000);
    assert.match(String(await tab.evaluate(TURN_TEXT)), script.laterAnswer);
    await script.alwaysEffect();
    assert.deepEqual((await api(app, "/api/state")).pending, []);
  });

  if (script.mcp) {
    const { prompt, server } = script.mcp;
    await t.step("an MCP tool's card names its server and source, as text", async () => {
      const id = await ask(tab, prompt);
      const server_ = String(
        await tab.evaluate(
          `document.querySelector(${JSON.stringify(inCard(id, ".server"))})?.textContent`,
        ),
      );
      assert.equal(server_, `MCP server “${server}” (configured in project)`);
      assert.equal(await tab.evaluate(`document.querySelectorAll(".card img, .card b").length`), 0);
      assert.equal(await tab.evaluate(`document.title`), "claude · web approvals");
      await tab.click(inCard(id, ".deny"));
      assert.match(String(await tab.waitFor(RESULT, "the turn's result", 30_000)), /^✓ done/);
    });
  }

  await t.step("Ctrl-C ends the page's stream, the session and its CLI; exit 0", async () => {
    Deno.kill(app.child.pid, "SIGINT"); // the app alone, not its process group
    const status = await app.child.exit(20_000);
    assert.equal(status.code, 0, app.child.describe());
    assert.match(app.child.stdout, /SIGINT: closing the pages and the session…\nClosed \(/);
    if (app.cliPid !== undefined) assert.equal(await processAlive(app.cliPid), false);
    await tab.waitFor(`document.getElementById("status").className !== "live"`, "disconnected");
  });

  await t.step("closing the browser leaves none of its processes", async () => {
    await browser.close();
  });
}

/** Like `runtimeTest` without the CLI: skips loudly without Chromium, fails on CI. */
function chromiumTest(name: string, fn: (t: Deno.TestContext, chromium: string) => Promise<void>) {
  const status = runtimeStatus("chromium");
  if (!status.available) unavailableTest(name, `chromium: ${status.reason}`);
  else Deno.test(name, (t) => withinLimit(name, fn(t, status.path), LIMIT_MS));
}

chromiumTest("web approvals: the page drives the stand-in in headless Chromium", async (t, bin) => {
  await using empty = await tempDir("duplex-no-claude-");
  // No --stand-in: with no claude on PATH and no CLAUDE_CLI, the app says so and falls back.
  const app = await startApp([], { PATH: empty.path, HOME: empty.path });
  await using _ = app.child;
  assert.match(app.child.stdout, /No usable claude \(.*\): using the stand-in\./);
  assert.match(app.url, /^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{43}$/);
  await t.step("refuses other sites, rebound names, stray clients and big bodies", async () => {
    await checkDefences(app);
  });
  await scenario(t, bin, app, {
    allow: "What is in this folder?",
    allowCommand: "ls",
    allowAnswer:
      /\(stand-in output of ls\)[\s\S]*The command was allowed\. You said: What is in this folder\?$/,
    allowEffect: async () => {},
    beforeCard: /^\(stand-in\) To answer that I would like to run `ls`\.Bash wants to run/,
    deny: "Clean up with `rm -rf build`, please.",
    denyCard: {
      title: /^Claude wants to delete files: rm -rf build/,
      defaultToNo: true,
      rule: "Bash(rm:*) (userSettings)",
    },
    denyAnswer: /The command was denied \(A person denied this from the web page\)/,
    denyEffect: async () => {},
    later: "Asked with no page open",
    laterAnswer: new RegExp(
      `The command was allowed always\\. You said: Asked with no page open ${escape(MARKUP)}$`,
    ),
    alwaysEffect: async () => {},
    mcp: { prompt: `[[mcp:${MARKUP_NAME}:lookup]]`, server: MARKUP_NAME },
    screenshot: SCREENSHOT,
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

runtimeTest(
  "web approvals: the page drives the real CLI (offline) in headless Chromium",
  ["chromium"],
  async (t, cli, bin) => {
    await withSandbox(async ({ env, work, home }) => {
      const app = await startApp(["--cli", "--cwd", work], { ...env, CLAUDE_CLI: cli });
      await using _ = app.child;
      assert.ok(app.cliPid !== undefined && await processAlive(app.cliPid), app.child.stdout);
      await scenario(t, bin.chromium!, app, {
        allow: "[[tool:bash:touch web-allowed.txt && echo web-allowed-ran]]",
        allowCommand: "touch web-allowed.txt && echo web-allowed-ran",
        allowAnswer: /web-allowed-ran[\s\S]*Tool said: web-allowed-ran$/,
        allowEffect: async () => assert.ok(await exists(`${work}/web-allowed.txt`), "it ran"),
        // A dangerous rm: the CLI suppresses "always" (sandbox HOME; denied by a click anyway).
        deny: "[[tool:bash:rm -rf ~]]",
        denyCard: {
          title: /^Bash wants to run.*Dangerous rm operation on critical path/,
          defaultToNo: false,
        },
        denyAnswer: /Tool failed: A person denied this from the web page$/,
        denyEffect: async () => assert.ok(await exists(home), "the sandbox HOME is still there"),
        later: "[[tool:bash:touch web-later.txt && echo web-later-ran]]",
        laterAnswer: /Tool said: web-later-ran$/,
        alwaysEffect: async () => {
          // The CLI saved the rule it suggested, where it said it would (localSettings).
          const saved = JSON.parse(await Deno.readTextFile(`${work}/.claude/settings.local.json`));
          assert.ok(
            saved.permissions.allow.includes("Bash(touch web-later.txt && echo web-later-ran)"),
            JSON.stringify(saved),
          );
        },
      });
      assert.ok(await exists(`${work}/web-later.txt`));
    });
  },
);
