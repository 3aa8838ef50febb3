/**
 * A host program for the permission and host-exit tests: opens a subprocess
 * transport as told by its JSON argument and reports on stdout, one JSON
 * line per event.
 *
 * Argument: `{ "mode": …, "options": SubprocessOptions }`, where mode is
 * - `"open"`: report `{"opened":pid}` or `{"error":{kind,message}}`, close, report `{"exit":…}`;
 * - `"hold"`: report `{"pid","grandchild"}` (when the stand-in reports one), then wait
 *   forever (the test signals this process);
 * - `"exit"`: report as `"hold"`, then `Deno.exit(0)` at once;
 * - `"user-listener"`: as `"hold"`, plus an own SIGINT listener that waits for the
 *   transport to close, reports `{"user":exit}` and exits with 7;
 * - `"natural"`: open, close, and end without exiting explicitly;
 * - `"orphan"`: open, read the stand-in's `fake_grandchild`, close, report
 *   `{"cli","grandchild","exit"}`;
 * - `"spy"`: as `"hold"`, and from before the open on, reports every listener
 *   added or removed on `globalThis` or with `Deno.add/removeSignalListener`
 *   as `{"listener":"add"|"remove","on":"event"|"signal","type":…}`, at once.
 */

import { subprocess, type SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { DuplexError } from "../../../src/errors.ts";
import { FrameReader } from "./_helpers.ts";

interface Order {
  readonly mode: "open" | "hold" | "exit" | "user-listener" | "natural" | "orphan" | "spy";
  readonly options: SubprocessOptions;
}

function report(value: unknown): void {
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(value) + "\n"));
}

/* Reports each listener the library adds or removes, synchronously (the host may exit next). */
function spyOnListeners(): void {
  for (const action of ["add", "remove"] as const) {
    const event = globalThis[`${action}EventListener`].bind(globalThis) as (
      type: string,
      ...rest: unknown[]
    ) => void;
    const signal = Deno[`${action}SignalListener`];
    Object.assign(globalThis, {
      [`${action}EventListener`]: (type: string, ...rest: unknown[]): void => {
        report({ listener: action, on: "event", type });
        event(type, ...rest);
      },
    });
    Object.assign(Deno, {
      [`${action}SignalListener`]: (type: Deno.Signal, handler: () => void): void => {
        report({ listener: action, on: "signal", type });
        signal(type, handler);
      },
    });
  }
}

const order: Order = JSON.parse(Deno.args[0] ?? "{}");
if (order.mode === "spy") spyOnListeners();
let transport;
try {
  transport = await subprocess(order.options)({ signal: new AbortController().signal });
} catch (error) {
  report({
    error: error instanceof DuplexError
      ? { kind: error.kind, message: error.message }
      : { kind: "other", message: String(error) },
  });
  Deno.exit(0);
}

if (order.mode === "orphan") {
  const frames = new FrameReader(transport);
  const grandchild = (await frames.nextOfType("fake_grandchild")).pid;
  const exit = await transport.close();
  await frames.rest();
  report({ cli: transport.info.pid, grandchild, exit });
} else if (order.mode === "open" || order.mode === "natural") {
  report({ opened: transport.info.pid });
  const exit = await transport.close();
  await transport.readable.cancel();
  report({ exit });
} else {
  const frames = new FrameReader(transport);
  const told = { ...order.options.env, ...order.options.extraEnv };
  if (told.FAKE_CLAUDE_HELLO === "1") await frames.nextOfType("fake_hello");
  let grandchild: unknown = null;
  if (told.FAKE_CLAUDE_GRANDCHILD === "1") {
    grandchild = (await frames.nextOfType("fake_grandchild")).pid;
  }
  if (order.mode === "user-listener") {
    const opened = transport;
    Deno.addSignalListener("SIGINT", () => {
      opened.closed.then((exit) => {
        report({ user: exit });
        Deno.exit(7);
      });
    });
  }
  report({ pid: transport.info.pid, grandchild });
  if (order.mode === "exit") Deno.exit(0);
  setInterval(() => {}, 1 << 30);
}
