/**
 * The heartbeat both ends of the relay protocol run: a peer silent for two
 * beats is taken for gone, but not when the event loop stalled and what the
 * peer sent is still waiting to be read (a client that answered every ping
 * was dropped so under load: relay_lifecycle_test.ts's heartbeat step).
 */
import assert from "node:assert/strict";
import { heartbeat } from "../../src/wire/_heartbeat.ts";

/** Keeps the event loop busy for `ms`, as a loaded machine does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) { /* busy */ }
}

Deno.test("heartbeat() does not take a peer for gone when the loop stalled past its answer", {
  permissions: "none",
}, async () => {
  let heard = Date.now();
  let silent = 0;
  let pings = 0;
  const stop = new AbortController();
  const beating = heartbeat(20, stop.signal, {
    lastHeard: () => heard,
    ping: () => pings++,
    silent: () => silent++,
  });
  // The peer's answer is due at 30 ms, the beat's check at 20 ms; the loop stalls until 80 ms,
  // when both are due at once and the check's timer fires first.
  const answer = setTimeout(() => heard = Date.now(), 30);
  stall(80);
  await new Promise((resolve) => setTimeout(resolve, 30));
  stop.abort();
  await beating;
  clearTimeout(answer);
  assert.equal(silent, 0, "a peer whose answer waited behind the stall is not gone");
  assert.ok(pings >= 1, "it was pinged");
});

Deno.test("heartbeat() takes a silent peer for gone after two beats, and stops", {
  permissions: "none",
}, async () => {
  const since = Date.now();
  let gone = 0;
  let pings = 0;
  await heartbeat(20, new AbortController().signal, {
    lastHeard: () => since,
    ping: () => pings++,
    silent: () => gone = Date.now() - since,
  });
  assert.ok(gone > 40, `gone after ${gone} ms, not before two beats`);
  assert.ok(pings >= 1);
});

Deno.test("heartbeat() stopped while it looks again neither drops nor pings the peer", {
  permissions: "none",
}, async () => {
  const stop = new AbortController();
  let silent = 0;
  let pings = 0;
  const beating = heartbeat(10, stop.signal, {
    lastHeard: () => 0, // silent from the start: the first check (10 ms) looks again (to 15 ms)
    ping: () => pings++,
    silent: () => silent++,
  });
  setTimeout(() => stop.abort(), 12); // timers fire in order: always within the look
  await beating;
  assert.equal(silent, 0);
  assert.equal(pings, 0);
});
