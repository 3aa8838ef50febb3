/**
 * A program that serves a relay with `serveRelay()` and nothing else: no
 * signal listener of its own, the CLIs' default `hostSignal`
 * (`"close-and-exit"`). It prints `Relay listening on <url>`, then waits for
 * the relay to close. Configured by `RELAY_PROGRAM`: `{ token, workspace,
 * log, hang }` (the counted stand-in CLI logs its starts to `log`; with
 * `hang`, a second host-exit participant whose close never ends is
 * registered too).
 */

import { serveRelay } from "../../../adapters/relay/mod.ts";
import { COUNTED_CLI } from "./_client.ts";
import { denoRunArgs } from "../subprocess/_helpers.ts";
import { registerHostExitParticipant } from "../../../adapters/subprocess/_host_exit.ts";

const { token, workspace, log, hang } = JSON.parse(Deno.env.get("RELAY_PROGRAM") ?? "{}");
if (hang === true) {
  registerHostExitParticipant({
    hostSignal: "close-and-exit",
    close: () => new Promise(() => {}),
  });
}
const relay = serveRelay({
  tokens: [token],
  workspace,
  policy: { exposePid: true },
  cli: {
    binary: Deno.execPath(),
    binaryArgs: denoRunArgs(COUNTED_CLI),
    extraEnv: { RELAY_SPAWN_LOG: log },
  },
});
// deno-lint-ignore no-console
console.log(`Relay listening on ${relay.url}`);
await relay.closed;
