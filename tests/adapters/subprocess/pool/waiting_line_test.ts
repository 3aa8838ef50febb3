import assert from "node:assert/strict";
import { type Place, WaitingLine } from "../../../../adapters/subprocess/pool/_waiting_line.ts";

function place(): Place {
  return { wake: undefined };
}

Deno.test("WaitingLine.join() puts places in arrival order; standing() tells where, 0 when out", () => {
  const line = new WaitingLine();
  const [a, b, c] = [place(), place(), place()];
  assert.equal(line.standing(a), 0);
  assert.equal(line.join(a), 1);
  assert.equal(line.join(b), 2);
  assert.equal(line.join(c), 3);
  assert.deepEqual([line.standing(a), line.standing(b), line.standing(c)], [1, 2, 3]);
  assert.equal(line.length, 3);
  line.leave(b);
  assert.deepEqual([line.standing(a), line.standing(b), line.standing(c)], [1, 0, 2]);
  line.leave(b); // not in the line: nothing happens
  assert.equal(line.length, 2);
});

Deno.test("WaitingLine.wake() wakes every waiting place, in arrival order, once", async () => {
  const line = new WaitingLine();
  const places = [place(), place(), place()];
  const woken: number[] = [];
  const signal = new AbortController().signal;
  const waits = places.map((p, i) => {
    line.join(p);
    return line.wait(p, signal).then(() => woken.push(i));
  });
  line.wake();
  await Promise.all(waits);
  assert.deepEqual(woken, [0, 1, 2]);
  assert.ok(places.every((p) => p.wake === undefined), "a woken place is not woken again");
  assert.equal(line.length, 3, "waking leaves every place in the line");
});

Deno.test("WaitingLine.leave() of the first place wakes the others; of another, none", async () => {
  const line = new WaitingLine();
  const [first, second, third] = [place(), place(), place()];
  const signal = new AbortController().signal;
  for (const p of [first, second, third]) line.join(p);
  let thirdWoken = false;
  const thirdWait = line.wait(third, signal).then(() => thirdWoken = true);
  line.leave(second);
  await Promise.resolve();
  assert.equal(thirdWoken, false, "a place leaving from the middle frees no start");
  line.leave(first);
  await thirdWait;
  assert.equal(thirdWoken, true);
  assert.equal(line.standing(third), 1);
});

Deno.test("WaitingLine.wait() rejects with the signal's reason and stays in the line", async () => {
  const line = new WaitingLine();
  const p = place();
  line.join(p);
  const controller = new AbortController();
  const waiting = line.wait(p, controller.signal);
  const reason = new Error("gave up");
  controller.abort(reason);
  await assert.rejects(waiting, (error) => error === reason);
  assert.equal(line.standing(p), 1, "leaving is the caller's to do");
  line.leave(p);
  assert.equal(line.length, 0);
  await assert.rejects(line.wait(place(), controller.signal), (error) => error === reason);
});
