// deno-lint-ignore-file no-console -- examples print what they do
/**
 * The chat of `examples/web_approvals/` written with the AI SDK's `useChat`
 * (`page.tsx`, under 100 lines of React): streamed answers, Approve / Deny on
 * each tool Claude Code asks to run, a Stop button. The server is
 * `Deno.serve` with `chatHandler` (`app.ts`); each chat id gets a warm
 * `claude` in a `SessionPool`.
 *
 * Run (from the project root; the first two install the page's packages and esbuild):
 *
 *     deno run -P=install .ci/install_ai_sdk.ts
 *     deno run -P=runtimes .ci/install_runtimes.ts
 *     deno run --allow-net=127.0.0.1 --allow-env --allow-read --allow-run \
 *       examples/ai_chat/main.ts [--port N] [--cwd DIR]
 *
 * It uses `CLAUDE_CLI`, else `claude` on `PATH`, and prints the URL to open.
 * It listens on 127.0.0.1 only and has no login: anyone on this machine who
 * can reach the port can chat and approve tools (see `examples/web_approvals/`
 * for a per-run token). Ctrl-C ends the turns and the CLIs, then exits.
 *
 * @module
 */

import { ChatSessions } from "@duplex/claude/ai-sdk";
import { resolveBinary } from "@duplex/claude/subprocess";
import { chatApp } from "./app.ts";
import { bundlePage } from "./bundle.ts";

function flag(name: string, fallback: string): string {
  const at = Deno.args.indexOf(name);
  return at >= 0 && Deno.args[at + 1] !== undefined ? Deno.args[at + 1]! : fallback;
}

const port = Number(flag("--port", "0"));
const cwd = flag("--cwd", Deno.cwd());
const script = await bundlePage();
const chats = new ChatSessions({ process: { binary: await resolveBinary(), cwd } });
const server = Deno.serve(
  {
    hostname: "127.0.0.1",
    port,
    onListen: ({ port }) => console.log(`Open http://127.0.0.1:${port}/`),
  },
  chatApp(chats, script),
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    console.log(`${signal}: closing…`);
    await server.shutdown();
    await chats.close();
    Deno.exit(0);
  });
}
