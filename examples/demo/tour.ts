/**
 * The demo's scripted tour, for when stdin is not a terminal (CI, a pipe):
 * a session over a scripted stand-in of the CLI that speaks the real wire
 * protocol (frames shaped like recorded CLI 2.1.332 sessions), with no
 * `claude` binary and no API key.
 *
 * It shows streaming events with `for await`, a tool permission answered by
 * code (with a rewritten input), a deferred permission answered "later" by a
 * person (simulated), and a stalled turn cancelled with an AbortSignal. Each
 * step waits until the subscriber has printed the turn's events, so the
 * output is in order.
 *
 * @module
 */

import { DuplexSession, type PermissionRequest, type SessionEvent } from "@duplex/claude";
import {
  assistantTextFrame,
  assistantToolUseFrame,
  canUseToolRequest,
  initFrame,
  resultFrame,
  ScriptedCli,
  streamTextDeltaFrames,
  userToolResultFrame,
} from "@duplex/claude/testing";

const encoder = new TextEncoder();

function log(line: string): void {
  Deno.stdout.writeSync(encoder.encode(line + "\n"));
}

/* A stand-in CLI: plain prompts are echoed with streaming deltas; "[[tool]]" asks to run Bash;
   "[[ask a person]]" asks to Write; "[[stall]]" streams a little and hangs until interrupted. */
function tourCli(): ScriptedCli {
  const cli = new ScriptedCli({ sessionId: "demo-session" });
  let cost = 0;
  const result = (text: string, uuid: unknown) =>
    resultFrame({ text, totalCostUsd: cost += 0.0003, userMessageUuid: String(uuid) });
  const has = (marker: string) => (f: Record<string, unknown>) =>
    f.type === "user" && JSON.stringify(f).includes(marker);

  cli.on(has("[[tool]]"), (frame, c) => {
    c.emit(initFrame({ sessionId: "demo-session" }));
    c.emit(
      assistantToolUseFrame({ id: "toolu_demo", name: "Bash", input: { command: "rm -rf build" } }),
    );
    c.emit(canUseToolRequest({
      requestId: "perm-demo-1",
      toolName: "Bash",
      input: { command: "rm -rf build" },
      toolUseId: "toolu_demo",
    }));
    c.nextWrite("control_response").then((answer) => {
      const decision = (answer.response as { response: Record<string, unknown> }).response;
      const ran = (decision.updatedInput as { command?: string } | undefined)?.command;
      c.emit(userToolResultFrame({ toolUseId: "toolu_demo", content: `ran: ${ran}` }));
      c.emit(assistantTextFrame(`The tool ran \`${ran}\`.`));
      c.emit(result(`The tool ran \`${ran}\`.`, frame.uuid));
    });
  });
  cli.on(has("[[ask a person]]"), (frame, c) => {
    c.emit(initFrame({ sessionId: "demo-session" }));
    c.emit(canUseToolRequest({
      requestId: "perm-demo-2",
      toolName: "Write",
      input: { file_path: "notes.md" },
    }));
    c.nextWrite("control_response", { timeoutMs: 60_000 }).then((answer) => {
      const decision = (answer.response as { response: { behavior: string } }).response;
      const how = decision.behavior === "allow" ? "allowed" : "denied";
      c.emit(result(`Write was ${how}.`, frame.uuid));
    });
  });
  cli.on(has("[[stall]]"), (frame, c) => {
    c.emit(initFrame({ sessionId: "demo-session" }));
    const stalled = streamTextDeltaFrames("Thinking very hard about", { messageId: "msg_stall" });
    c.emit(...stalled.slice(0, 4));
    c.nextWrite("control_request:interrupt").then((req) => {
      c.emit({
        type: "control_response",
        response: {
          subtype: "success",
          request_id: req.request_id,
          response: { still_queued: [] },
        },
      });
      c.emit(resultFrame({
        subtype: "error_during_execution",
        terminalReason: "aborted_streaming",
        userMessageUuid: String(frame.uuid),
      }));
    });
  });
  cli.on("user", (frame, c) => {
    const text = JSON.stringify(frame.message).match(/"text":"([^"]*)"/)?.[1] ?? "";
    c.emit(initFrame({ sessionId: "demo-session" }));
    c.emit(...streamTextDeltaFrames(`Echo: ${text}`, { messageId: `msg_${frame.uuid}` }));
    c.emit(assistantTextFrame(`Echo: ${text}`));
    c.emit(result(`Echo: ${text}`, frame.uuid));
  });
  return cli;
}

/** A UI-style subscriber that prints what streams in, and lets the tour wait for it. */
class Printer {
  readonly done: Promise<void>;
  #results = 0;
  #waiters: { count: number; resolve: () => void }[] = [];

  constructor(session: DuplexSession) {
    this.done = (async () => {
      for await (const event of session.subscribe({ capacity: 1024 })) this.#print(event);
    })();
  }

  /** Resolves once the subscriber has printed `count` results in all. */
  printed(count: number): Promise<void> {
    if (this.#results >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  #print(event: SessionEvent): void {
    if (event.type === "stream_event" && event.event.type === "content_block_delta") {
      const delta = event.event.delta as { text?: string };
      if (delta.text) log(`  [stream] ${JSON.stringify(delta.text)}`);
    } else if (event.type === "permission_request") {
      log(`  [event] permission_request for ${event.request.toolName}`);
    } else if (event.type === "exit") {
      log(`  [event] exit: ${event.status.state}`);
    } else if (event.type === "result") {
      this.#results += 1;
      for (const waiter of this.#waiters.filter((w) => w.count <= this.#results)) waiter.resolve();
      this.#waiters = this.#waiters.filter((w) => w.count > this.#results);
    }
  }
}

/** Runs the tour and closes its session. */
export async function runTour(): Promise<void> {
  const session = await DuplexSession.start({
    transport: tourCli().transport,
    onPermission(request: PermissionRequest) {
      if (request.toolName === "Bash") {
        log(
          `  [permission] ${request.toolName} wants: ${request.input.command} -> allow, rewritten`,
        );
        return { behavior: "allow", updatedInput: { command: "echo 'rm skipped by host'" } };
      }
      log(`  [permission] ${request.toolName} deferred to a person (id ${request.requestId})`);
      return { behavior: "defer" };
    },
  });
  const printer = new Printer(session);

  log("1. A plain turn, streamed:");
  const hello = await session.send("Say hi.");
  await printer.printed(1);
  log(`   result: ${hello.result.text} (cost $${hello.result.costUsd.toFixed(4)})`);

  log("2. A tool call answered by code:");
  const tool = await session.send("Clean the build [[tool]]");
  await printer.printed(2);
  log(`   result: ${tool.result.text}`);

  log("3. A tool call answered later by a person:");
  const waiting = session.send("Take notes [[ask a person]]");
  setTimeout(() => {
    log("   (a person clicks 'Allow' 300 ms later)");
    session.respondToPermission("perm-demo-2", { behavior: "allow" });
  }, 300);
  const noted = await waiting;
  await printer.printed(3);
  log(`   result: ${noted.result.text}`);

  log("4. A stalled turn, cancelled with AbortSignal.timeout(200):");
  try {
    await session.send("Ponder forever [[stall]]", { signal: AbortSignal.timeout(200) });
  } catch (error) {
    await printer.printed(4);
    log(`   send rejected with ${(error as Error).name}; the CLI was interrupted`);
  }
  const after = await session.send("Still there?");
  await printer.printed(5);
  log(`   next turn works: ${after.result.text}`);

  log(`Session ${session.sessionId}: closing.`);
  const status = await session.close();
  await printer.done;
  log(`Closed: ${status.state}.`);
  log("In a terminal, `deno task demo` is a chat with claude (or this stand-in); see README.md.");
}
