/** A relayed session's phase: whether its client asked to close it, in each phase. */

import assert from "node:assert/strict";
import {
  closeRequested,
  CLOSING,
  type Phase,
  RUNNING,
} from "../../../adapters/relay/_relay_session_types.ts";

Deno.test("closeRequested() tells a close the client asked for, before or after the exit", () => {
  const cases: [Phase, boolean][] = [
    [RUNNING, false],
    [CLOSING, true],
    [{ phase: "exited", exitSeq: 3, closeRequested: false }, false],
    [{ phase: "exited", exitSeq: 3, closeRequested: true }, true],
    [{ phase: "forgotten", done: Promise.resolve() }, false],
  ];
  for (const [phase, expected] of cases) {
    assert.equal(closeRequested(phase), expected, JSON.stringify(phase));
  }
});
