// deno-lint-ignore-file no-console -- examples print what they do
/**
 * A web page that approves tool calls: chat with `claude`, watch its answer
 * stream in, and Allow or Deny each tool it wants to run from a card on the
 * page (the deferred flow: `onPermission` defers, the page's click calls
 * `session.respondToPermission`). Requests that arrived while no page was
 * open wait, and show up when one opens.
 *
 * Run (from the project root):
 *
 *     deno run --allow-net=127.0.0.1 --allow-env --allow-read --allow-run \
 *       examples/web_approvals/main.ts [--stand-in | --cli] [--port N] [--cwd DIR] [--model M]
 *
 * It uses the real CLI (`CLAUDE_CLI`, else `claude` on `PATH`) when there is
 * one, else says so and runs a stand-in that needs no binary, key or network
 * (`--stand-in` forces it, `--cli` refuses to fall back). It prints the URL
 * to open: `http://127.0.0.1:<port>/#token=…`.
 *
 * Safe to copy: it listens on 127.0.0.1 only (`--host` to change it, with a
 * warning), every call needs the per-run token from the URL's fragment (so
 * no other site or local page can drive it), POSTs take a bearer header and
 * JSON of at most 64 KiB, the page puts model and tool text in the DOM as
 * text only. One session per server: every open page shares it. Ctrl-C
 * ends the pages, the turn in flight and the CLI, then exits.
 *
 * @module
 */

import { DuplexError, DuplexSession, type TransportFactory } from "@duplex/claude";
import { resolveBinary, subprocess } from "@duplex/claude/subprocess";
import { serveApprovals } from "./app.ts";
import { standIn } from "./stand_in.ts";

interface Flags {
  backend: "auto" | "cli" | "stand-in";
  host: string;
  port: number;
  cwd: string;
  model: string | undefined;
}

const USAGE = "Usage: main.ts [--stand-in | --cli] [--host H] [--port N] [--cwd DIR] [--model M]";

function parseFlags(args: readonly string[]): Flags {
  const flags: Flags = { backend: "auto", host: "127.0.0.1", port: 0, cwd: "", model: undefined };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new TypeError(`${arg} needs a value. ${USAGE}`);
      return next;
    };
    if (arg === "--stand-in") flags.backend = "stand-in";
    else if (arg === "--cli") flags.backend = "cli";
    else if (arg === "--host") flags.host = value();
    else if (arg === "--cwd") flags.cwd = value();
    else if (arg === "--model") flags.model = value();
    else if (arg === "--port") {
      flags.port = Number(value());
      if (!Number.isInteger(flags.port) || flags.port < 0 || flags.port > 65_535) {
        throw new RangeError(`--port must be 0 to 65535. ${USAGE}`);
      }
    } else throw new TypeError(`Unknown argument ${arg}. ${USAGE}`);
  }
  return flags;
}

/** What runs behind the session. */
interface Backend {
  readonly name: string;
  readonly transport: TransportFactory;
  stop(): void;
}

/** The real CLI, or the stand-in when there is none (and none was demanded). */
async function chooseBackend(flags: Flags): Promise<Backend> {
  if (flags.backend !== "stand-in") {
    try {
      const binary = await resolveBinary();
      const transport = subprocess({
        pathToClaudeCodeExecutable: binary,
        cwd: flags.cwd || Deno.cwd(),
        includePartialMessages: true, // stream_event deltas: the page streams the answer
        hostSignal: "close", // our SIGINT listener exits, after closing the pages
        ...(flags.model && { model: flags.model }),
      });
      return { name: `claude (${binary})`, transport, stop() {} };
    } catch (error) {
      if (flags.backend === "cli" || !(error instanceof DuplexError)) throw error;
      console.log(`No usable claude (${error.message.split("\n")[0]}): using the stand-in.`);
    }
  }
  const stand = standIn();
  return {
    name: "stand-in (no claude, nothing runs)",
    transport: stand.transport,
    stop: () => stand[Symbol.dispose](),
  };
}

async function start(): Promise<{ flags: Flags; backend: Backend; session: DuplexSession }> {
  try {
    const flags = parseFlags(Deno.args);
    const backend = await chooseBackend(flags);
    const session = await DuplexSession.start({
      transport: backend.transport,
      onPermission: () => ({ behavior: "defer" }), // every request waits for a person on the page
    });
    return { flags, backend, session };
  } catch (error) {
    // A bad flag, no claude with --cli, a missing permission: one line that says what to do.
    console.error(error instanceof Error ? error.message : String(error));
    Deno.exit(2);
  }
}

const { flags, backend, session } = await start();
const server = await serveApprovals(session, {
  backend: backend.name,
  hostname: flags.host,
  port: flags.port,
}).catch(async (error) => {
  console.error(`Cannot listen on ${flags.host}:${flags.port}: ${error.message}`); // port taken
  await session.close();
  Deno.exit(2);
});
if (!/^(127\.|localhost$|::1$)/.test(flags.host)) {
  console.log(`Warning: listening on ${flags.host}: plain HTTP, the token is all that guards it.`);
}
console.log(`Backend: ${backend.name}${session.pid ? `, pid ${session.pid}` : ""}`);
console.log(`Open ${server.url}`);

let stopping = false;
async function stop(why: string, code: number): Promise<void> {
  if (stopping) Deno.exit(130); // a second Ctrl-C: give up waiting (the CLI still ends with us)
  stopping = true;
  console.log(`${why}: closing the pages and the session…`);
  await server.shutdown();
  backend.stop();
  const status = await session.close();
  console.log(`Closed (${status.state}).`);
  Deno.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => void stop(signal, 0));
}
// The CLI ending by itself (it crashed, or cannot log in) ends the program too.
session.waitForExit().then((status) => {
  if (!stopping) void stop(`The session ended (${status.state})`, 1);
});
