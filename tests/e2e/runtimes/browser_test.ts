/**
 * A real browser: headless Chromium (the Debian package) loads the example
 * page (`examples/edge/browser/`, its script bundled with `deno bundle`),
 * served on 127.0.0.1, which runs a turn of the real CLI through a relay
 * with the token in the WebSocket subprotocol. The test drives Chromium
 * through the DevTools protocol and asserts what the page ended with.
 */
import assert from "node:assert/strict";
import { Chromium } from "./_chromium.ts";
import { bundle, projectPath, runtimeTest, tempDir, withRelay } from "./_runtimes.ts";

/** Waits in the page for `globalThis.duplexResult` (set by the module script), then awaits it. */
const READ_RESULT = `new Promise((resolve) => {
  const poll = () => globalThis.duplexResult ? resolve(globalThis.duplexResult) : setTimeout(poll, 20);
  poll();
}).then(async (result) => ({ result, shown: document.getElementById("output").textContent }))`;

runtimeTest(
  "browser: headless Chromium runs a turn through the relay from the example page",
  ["chromium"],
  async (t, cli, bin) => {
    await withRelay(cli, async ({ relay, token }) => {
      await using dir = await tempDir("duplex-browser-");
      const script = await bundle("examples/edge/browser/client.ts", `${dir.path}/client.js`);
      const page = await Deno.readTextFile(projectPath("examples/edge/browser/index.html"));
      await using site = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        (request) => {
          const { pathname } = new URL(request.url);
          if (pathname === "/") {
            return new Response(page, { headers: { "content-type": "text/html" } });
          }
          if (pathname === "/client.js") {
            return new Response(script, { headers: { "content-type": "text/javascript" } });
          }
          return new Response("Not found", { status: 404 });
        },
      );
      const origin = `http://127.0.0.1:${site.addr.port}`;

      await using chromium = await Chromium.start(bin.chromium!, dir.path);
      const { cdp } = chromium;

      const open = (fragment: Record<string, string>) =>
        cdp.evaluateIn(`${origin}/#${new URLSearchParams(fragment)}`, READ_RESULT);

      await t.step("the page completes a turn and shows the assistant's text", async () => {
        const prompt = "Hello from Chromium";
        const { result, shown } = await open({ relay: relay.url, token, prompt }) as {
          result: Record<string, unknown>;
          shown: string;
        };
        assert.equal(result.ok, true, JSON.stringify(result));
        assert.equal(result.text, `Echo: ${prompt}`);
        assert.equal(result.isError, false);
        assert.match(String(result.sessionId), /^[0-9a-f-]{36}$/);
        assert.equal(shown, `Echo: ${prompt}`);
      });

      await t.step("the token is what lets it in: a wrong one is unauthorized", async () => {
        const { result } = await open({ relay: relay.url, token: `${token}-wrong` }) as {
          result: Record<string, unknown>;
        };
        assert.equal(result.ok, false);
        assert.equal(result.name, "DuplexError");
        assert.equal(result.kind, "unauthorized", JSON.stringify(result));
        // The relay refuses before the upgrade (HTTP 401); the page's WebSocket sees only a
        // close 1006, and the client reads the reason with one plain GET (CORS) of the URL.
        assert.match(String(result.message), /the bearer token is wrong/);
      });

      await t.step("closing the browser leaves none of its processes running", async () => {
        // Its helpers (zygotes, crash handler) are not our children: each names the profile.
        await chromium.close();
      });
    });
  },
);
