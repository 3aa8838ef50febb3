/**
 * `deno task demo`: first contact with @duplex/claude.
 *
 * - In a terminal: a chat with `claude` over one long-lived session
 *   (`examples/demo/chat.ts`): the answer streams in, each permission
 *   request asks you (allow / deny / always allow), Ctrl-C interrupts a
 *   turn, `/model`, `/mode`, `/cost`, `/quit`. It uses the real `claude`
 *   (`CLAUDE_CLI`, else `PATH`) when it can answer, else it says why in one
 *   line and runs against a built-in stand-in, so it works with no binary,
 *   no key and no network.
 * - Otherwise (stdin not a terminal: CI, a pipe): a scripted tour against
 *   the stand-in (`examples/demo/tour.ts`) that exits 0.
 *
 * Run: `deno task demo` (it grants `--allow-run --allow-env --allow-read`).
 * For a program of your own on the real CLI, start from `examples/one_turn.ts`.
 *
 * @module
 */

import { runChat } from "./demo/chat.ts";
import { runTour } from "./demo/tour.ts";

if (Deno.stdin.isTerminal()) await runChat();
else await runTour();
