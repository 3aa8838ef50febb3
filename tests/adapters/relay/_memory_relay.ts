/**
 * A relay in a process of its own, so that a test can measure its memory:
 * `deno run -A --config=deno.json _memory_relay.ts <workspace> <secret> <origin>`.
 * It serves the counted stand-in CLI (its starts logged to
 * `<workspace>.spawns`) with the test token, the secret and the one allowed
 * origin, prints `{"port":…}` on a line, then answers each line of stdin
 * with a line of JSON:
 *
 * - `reset`: resets the peak (`VmHWM`) to the resident size now (`5` to
 *   `/proc/self/clear_refs`), and answers `{ rss, hwm }` in kB;
 * - `peak`: answers `{ rss, hwm }` in kB;
 * - `exit`: closes the relay and exits 0.
 *
 * @module
 */

import { serveRelay } from "../../../adapters/relay/mod.ts";
import { countedCli, TOKEN } from "./_client.ts";

const [workspace, secret, origin] = Deno.args;
if (workspace === undefined || secret === undefined || origin === undefined) {
  throw new Error("Usage: _memory_relay.ts <workspace> <secret> <origin>");
}

/** The resident size and its peak, in kB. */
function memory(): { rss: number; hwm: number } {
  const status = Deno.readTextFileSync("/proc/self/status");
  const field = (name: string): number =>
    Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

const relay = serveRelay({
  tokens: [TOKEN],
  secrets: [secret],
  allowedOrigins: [origin],
  workspace,
  cli: countedCli(`${workspace}.spawns`),
});
const out = Deno.stdout;
const encoder = new TextEncoder();
const say = (value: unknown) => out.writeSync(encoder.encode(JSON.stringify(value) + "\n"));
say({ port: relay.port });

for await (const line of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  for (const command of line.split("\n").map((item) => item.trim())) {
    if (command === "reset") {
      Deno.writeTextFileSync("/proc/self/clear_refs", "5");
      say(memory());
    } else if (command === "peak") {
      say(memory());
    } else if (command === "exit") {
      await relay.close();
      Deno.exit(0);
    }
  }
}
await relay.close();
