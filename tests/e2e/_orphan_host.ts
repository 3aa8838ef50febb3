/**
 * A host program for `orphans_e2e_test.ts`: starts a {@linkcode DuplexSession}
 * on the real CLI (default `hostSignal: "close-and-exit"`, so the adapter's
 * host-exit registry owns the SIGINT/SIGTERM/SIGHUP handling), lets an allowed
 * Bash tool start long-running background processes, reports their pids, and
 * waits to be signalled.
 *
 * Argument: one JSON text `{ cli, work, env, command, running?, awaitRunning? }`:
 * - `command`: the Bash command that starts the background processes and prints
 *   `name=pid` lines (its turn is awaited);
 * - `running`: a Bash command started in a second turn that is still running
 *   when the host is signalled (not awaited, unless `awaitRunning`);
 * - `awaitRunning`: await that second turn at top level as a plain program would
 *   (its rejection then ends the program); default: the turn's failure is caught;
 * - `exitOnUsr1`: call `Deno.exit(0)` when SIGUSR1 arrives (the `unload` path).
 *
 * Reports on stdout, one JSON line each: `{"cli":pid,"text":<tool output>}` after the
 * first turn, then `{"waiting":true}`.
 *
 * @module
 */

import { allow, DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";

interface Order {
  readonly cli: string;
  readonly work: string;
  readonly env: Record<string, string>;
  readonly command: string;
  readonly running?: string;
  readonly awaitRunning?: boolean;
  readonly exitOnUsr1?: boolean;
}

function report(value: unknown): void {
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(value) + "\n"));
}

const order: Order = JSON.parse(Deno.args[0] ?? "{}");
const session = await DuplexSession.start({
  transport: subprocess({ binary: order.cli, cwd: order.work, env: order.env, clearEnv: true }),
  onPermission: () => allow(),
});
const first = await session.send(`[[tool:bash:${order.command}]]`, { timeoutMs: 20_000 });
report({ cli: session.pid, text: first.result.text });
if (order.exitOnUsr1 === true) Deno.addSignalListener("SIGUSR1", () => Deno.exit(0));
// Keeps the program alive until it is signalled (the registry exits it).
setInterval(() => {}, 1 << 30);
if (order.running !== undefined) {
  const running = session.send(`[[tool:bash:${order.running}]]`);
  report({ waiting: true });
  if (order.awaitRunning === true) await running;
  else running.catch(() => {});
} else {
  report({ waiting: true });
}
