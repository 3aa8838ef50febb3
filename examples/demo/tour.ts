/**
 * The demo's scripted tour, for when stdin is not a terminal (CI, a pipe):
 * a session over the chat's own stand-in for the CLI (`stand_in.ts`, which
 * speaks the real wire protocol), with no `claude` binary and no API key.
 *
 * It shows streaming events with `for await`, a tool permission answered by
 * code (with a rewritten input), a deferred permission answered "later" by a
 * person (simulated), and a slow turn cancelled with an AbortSignal. Each
 * step waits until the subscriber has printed the turn's events, so the
 * output is in order.
 *
 * @module
 */

import { DuplexSession, type PermissionRequest, type SessionEvent } from "@duplex/claude";
import { standIn } from "./stand_in.ts";

const encoder = new TextEncoder();

function write(text: string): void {
  Deno.stdout.writeSync(encoder.encode(text));
}

function log(line: string): void {
  write(line + "\n");
}

/** A UI-style subscriber that prints what streams in, and lets the tour wait for it. */
class Printer {
  readonly done: Promise<void>;
  #results = 0;
  #streaming = false;
  #waiters: { count: number; resolve: () => void }[] = [];
  #asked: ((request: PermissionRequest) => void)[] = [];

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

  /** Resolves with the next permission request the subscriber shows (a UI's card). */
  nextRequest(): Promise<PermissionRequest> {
    return new Promise((resolve) => this.#asked.push(resolve));
  }

  #print(event: SessionEvent): void {
    if (event.type === "stream_event" && event.event.type === "content_block_delta") {
      const delta = event.event.delta as { text?: string };
      if (!delta.text) return;
      if (!this.#streaming) write("  [stream] ");
      this.#streaming = true;
      write(delta.text); // each piece as it arrives
      return;
    }
    if (this.#streaming) write("\n");
    this.#streaming = false;
    if (event.type === "permission_request") {
      log(`  [event] permission_request for ${event.request.toolName}`);
      for (const resolve of this.#asked.splice(0)) resolve(event.request);
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
    transport: standIn(),
    onPermission(request: PermissionRequest) {
      const command = String(request.input.command);
      if (command.startsWith("rm ")) {
        log(`  [permission] ${request.toolName} wants: ${command} -> allow, rewritten`);
        return { behavior: "allow", updatedInput: { command: "echo 'rm skipped by host'" } };
      }
      log(`  [permission] ${request.toolName}: ${command} deferred to a person`);
      return { behavior: "defer" };
    },
  });
  const printer = new Printer(session);

  log("1. A plain turn, streamed:");
  const hello = await session.send("Say hi.");
  await printer.printed(1);
  log(`   result: ${hello.result.text} (cost $${hello.result.costUsd.toFixed(4)})`);

  log("2. A tool call answered by code:");
  const tool = await session.send("Clean the build [[tool:bash:rm -rf build]]");
  await printer.printed(2);
  log(`   result: ${tool.result.text}`);

  log("3. A tool call answered later by a person:");
  const waiting = session.send("Take notes [[tool:bash:touch notes.md]]");
  const card = await printer.nextRequest();
  await new Promise((resolve) => setTimeout(resolve, 300)); // the person reads the card
  log(`   (a person clicks 'Allow' for ${card.toolName} 300 ms later)`);
  await session.respondToPermission(card.requestId, { behavior: "allow" });
  const noted = await waiting;
  await printer.printed(3);
  log(`   result: ${noted.result.text}`);

  log("4. A slow turn, cancelled with AbortSignal.timeout(200):");
  try {
    await session.send("Ponder this [[slow]]", { signal: AbortSignal.timeout(200) });
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
