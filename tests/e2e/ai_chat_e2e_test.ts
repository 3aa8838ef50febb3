/**
 * examples/ai_chat in a real browser: the page (`@ai-sdk/react`'s `useChat`,
 * bundled by esbuild from `.cache/ai-sdk/`) in headless Chromium, the
 * example's server (`chatHandler`) in this process on the real CLI and the
 * fake Messages API. Driven as a person would over the DevTools protocol:
 * a typed prompt's answer appears, a Bash call approved on the page really
 * runs, one denied does not, Stop mid-turn interrupts the turn in the CLI
 * and the next prompt works. Saves docs/ai_chat.png (a tool waiting for
 * Approve / Deny).
 */
import assert from "node:assert/strict";
import { ChatSessions } from "../../adapters/ai_sdk/mod.ts";
import { chatApp } from "../../examples/ai_chat/app.ts";
import { bundlePage } from "../../examples/ai_chat/bundle.ts";
import { missingPackages } from "../../.ci/install_ai_sdk.ts";
import { Chromium } from "./runtimes/_chromium.ts";
import { interrupted, projectPath, runtimeTest, tempDir } from "./runtimes/_runtimes.ts";
import { exists, withSandbox } from "./_harness.ts";
import { unavailableTest } from "../_unavailable.ts";
import { Tab } from "./_web_tab.ts";

const NAME = "ai chat: a useChat page in headless Chromium on the real CLI";
const SCREENSHOT = projectPath("docs/ai_chat.png");

/** The text of the last assistant message on the page. */
const ANSWER = `([...document.querySelectorAll(".message.assistant")].at(-1)
  ?.querySelector(".text:last-of-type")?.textContent ?? "")`;
const LAST_TOOL = `[...document.querySelectorAll(".message.assistant .tool")].at(-1)`;

/** A bound on one turn's visible effect (the machine is loaded by other tests). */
const TURN_MS = 30_000;

async function ask(tab: Tab, prompt: string): Promise<void> {
  await tab.waitFor(
    `document.querySelector("main")?.dataset.status === "ready" ||
    document.querySelector("main")?.dataset.status === "error"`,
    "the page ready to send",
  );
  await tab.click("#prompt");
  await tab.type(prompt);
  await tab.pressEnter();
  await tab.waitFor(
    `[...document.querySelectorAll(".message.user .text")].at(-1)?.textContent === ${
      JSON.stringify(prompt)
    }`,
    "the prompt on the page",
    TURN_MS,
  );
}

/** Waits until the last tool call on the page is in `state` (its class). */
function toolIn(tab: Tab, state: string): Promise<unknown> {
  return tab.waitFor(`${LAST_TOOL}?.classList.contains("${state}")`, `a tool ${state}`, TURN_MS);
}

/** The status of the page's chat once no request runs. */
function settled(tab: Tab, what: string): Promise<unknown> {
  return tab.waitFor(`document.querySelector("main").dataset.status === "ready"`, what, TURN_MS);
}

const missing = await missingPackages();
if (missing.length > 0) {
  unavailableTest(
    NAME,
    `not installed: ${missing.join(", ")}; run deno run -P=install .ci/install_ai_sdk.ts`,
  );
} else {
  runtimeTest(NAME, ["chromium", "esbuild"], async (t, cli, bin) => {
    const script = await bundlePage({ esbuild: bin.esbuild! });
    await withSandbox(async (box) => {
      await using chats = new ChatSessions({
        process: { binary: cli, cwd: box.work, env: box.env, clearEnv: true },
        approvalTimeoutMs: 60_000,
      });
      await using server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        chatApp(chats, script),
      );
      await using dir = await tempDir("duplex-ai-chat-");
      await using browser = await Chromium.start(bin.chromium!, dir.path);
      const tab = await Tab.open(browser.cdp, `http://127.0.0.1:${server.addr.port}/`);

      await t.step("a typed prompt's answer appears", async () => {
        await ask(tab, "Hello browser");
        // The first turn starts the CLI: a loaded machine takes its time.
        await tab.waitFor(`${ANSWER} === "Echo: Hello browser"`, "the answer", 45_000);
        await settled(tab, "the turn's end");
      });

      await t.step("Approve on the page: the tool runs in the CLI", async () => {
        await ask(tab, "[[tool:bash:touch chat-approved.txt && echo chat-approved-ran]]");
        await toolIn(tab, "approval-requested");
        assert.equal(
          await tab.evaluate(`${LAST_TOOL}.textContent`),
          "Bash touch chat-approved.txt && echo chat-approved-ranApproveDeny",
        );
        assert.equal(chats.pending(await chatId(tab)).length, 1, "the CLI waits on the answer");
        await tab.click(".tool.approval-requested .approve");
        await toolIn(tab, "output-available");
        await tab.waitFor(`/Tool said: chat-approved-ran/.test(${ANSWER})`, "the answer", TURN_MS);
        assert.match(String(await tab.evaluate(`${LAST_TOOL}.textContent`)), /chat-approved-ran/);
        assert.ok(await exists(`${box.work}/chat-approved.txt`), "the tool ran");
        await settled(tab, "the turn's end");
      });

      await t.step("Deny on the page: the tool does not run, the answer says so", async () => {
        await ask(tab, "[[tool:bash:touch chat-denied.txt && echo chat-denied-ran]]");
        await toolIn(tab, "approval-requested");
        // The same PNG each run: no caret, fonts loaded, two frames painted.
        await tab.evaluate(`document.activeElement?.blur();
          document.fonts.ready.then(() =>
          new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))`);
        const png = await tab.screenshot();
        assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
        await Deno.writeFile(SCREENSHOT, png);
        await tab.click(".tool.approval-requested .deny");
        await toolIn(tab, "output-denied");
        await tab.waitFor(
          `/Tool failed: .*Denied on the page/.test(${ANSWER})`,
          "the answer",
          TURN_MS,
        );
        assert.ok(!(await exists(`${box.work}/chat-denied.txt`)), "the tool did not run");
        await settled(tab, "the turn's end");
      });

      await t.step("Stop mid-turn interrupts the turn; the next prompt works", async () => {
        await ask(tab, "[[stall]]");
        // Text on the page while the turn still runs: streamed.
        await tab.waitFor(
          `${ANSWER}.startsWith("Starting a long") &&
          document.querySelector("main").dataset.status === "streaming"`,
          "streamed text while the turn runs",
          TURN_MS,
        );
        await tab.click("#stop");
        await settled(tab, "the page stopped");
        const deadline = Date.now() + 20_000;
        while (!(await interrupted(box.home, "[[stall]]"))) {
          assert.ok(Date.now() < deadline, "the CLI recorded the interrupt");
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await ask(tab, "After stop");
        await tab.waitFor(`${ANSWER} === "Echo: After stop"`, "the next answer", TURN_MS);
        await settled(tab, "the turn's end");
      });

      await tab.close();
      await browser.close();
    });
  });
}

/** The chat id `useChat` made (the conversation's key on the server). */
async function chatId(tab: Tab): Promise<string> {
  return String(await tab.evaluate(`document.querySelector("main").dataset.chat`));
}
