import assert from "node:assert/strict";
import { countListeners } from "../session/_helpers.ts";
import { DuplexError } from "../../mod.ts";
import { Broadcast } from "../../src/subscriptions/_broadcast.ts";

type Ev = { type: "n"; n: number } | { type: "lagged"; count: number };
const lagged = (count: number): Ev => ({ type: "lagged", count });
const ev = (n: number): Ev => ({ type: "n", n });

async function drain(sub: AsyncIterable<Ev>): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const e of sub) out.push(e);
  return out;
}

Deno.test("Subscription delivers in order and ends after held events", {
  permissions: "none",
}, async () => {
  const b = new Broadcast<Ev>(lagged);
  const sub = b.subscribe({ capacity: 8 });
  for (let i = 0; i < 5; i++) b.publish(ev(i));
  b.close();
  assert.deepEqual(await drain(sub), [0, 1, 2, 3, 4].map(ev));
  assert.equal(b.size, 0);
});

Deno.test("Subscription with drop-oldest reports one lagged event at the gap", {
  permissions: "none",
}, async (t) => {
  await t.step("overflow by 3 of capacity 4", async () => {
    const b = new Broadcast<Ev>(lagged);
    const sub = b.subscribe({ capacity: 4 });
    for (let i = 0; i < 7; i++) b.publish(ev(i));
    b.close();
    assert.deepEqual(await drain(sub), [lagged(3), ev(3), ev(4), ev(5), ev(6)]);
    assert.equal(sub.dropped, 3);
  });
  await t.step("lagged counts add up over several gaps", async () => {
    const b = new Broadcast<Ev>(lagged);
    const sub = b.subscribe({ capacity: 2 });
    for (let i = 0; i < 5; i++) b.publish(ev(i)); // drops 0,1,2
    const first = await sub.next();
    assert.deepEqual(first.value, lagged(3));
    assert.deepEqual((await sub.next()).value, ev(3));
    for (let i = 5; i < 9; i++) b.publish(ev(i)); // holds 4, then drops 4,5,6
    b.close();
    const rest = await drain(sub);
    assert.deepEqual(rest, [lagged(3), ev(7), ev(8)]);
    const droppedSeen = [first.value, ...rest].reduce(
      (sum, e) => sum + (e?.type === "lagged" ? e.count : 0),
      0,
    );
    assert.equal(droppedSeen, sub.dropped);
    assert.equal(sub.dropped, 6);
  });
});

Deno.test("Subscription with overflow error fails after its held events", {
  permissions: "none",
}, async () => {
  const b = new Broadcast<Ev>(lagged);
  const sub = b.subscribe({ capacity: 2, overflow: "error" });
  for (let i = 0; i < 3; i++) b.publish(ev(i));
  assert.equal(b.size, 0, "a failed subscriber is unregistered at once");
  assert.deepEqual((await sub.next()).value, ev(0));
  assert.deepEqual((await sub.next()).value, ev(1));
  await assert.rejects(sub.next(), (e) => e instanceof DuplexError && e.kind === "lagged");
  assert.deepEqual(await sub.next(), { done: true, value: undefined });
});

Deno.test("Subscription ends on break, and a slow one never blocks others", {
  permissions: "none",
}, async () => {
  const b = new Broadcast<Ev>(lagged);
  const slow = b.subscribe({ capacity: 1 });
  const fast = b.subscribe({ capacity: 1000 });
  for (let i = 0; i < 100; i++) b.publish(ev(i));
  let seen = 0;
  for await (const e of fast) {
    assert.equal(e.type, "n");
    if (++seen === 100) break;
  }
  assert.equal(b.size, 1, "break unsubscribed the fast one");
  assert.equal(slow.size, 1);
  assert.equal(slow.dropped, 99);
  slow.unsubscribe();
  assert.equal(b.size, 0);
});

Deno.test("Subscription pending read resolves on push, on end and on unsubscribe", {
  permissions: "none",
}, async () => {
  const b = new Broadcast<Ev>(lagged);
  const sub = b.subscribe();
  const pending = sub.next();
  b.publish(ev(1));
  assert.deepEqual(await pending, { done: false, value: ev(1) });
  const waiting = sub.next();
  sub.unsubscribe();
  assert.deepEqual(await waiting, { done: true, value: undefined });
  b.publish(ev(2));
  assert.deepEqual(await sub.next(), { done: true, value: undefined });
});

Deno.test("Subscription refuses a second iteration", { permissions: "none" }, () => {
  const sub = new Broadcast<Ev>(lagged).subscribe();
  sub[Symbol.asyncIterator]();
  assert.throws(() => sub[Symbol.asyncIterator](), TypeError);
});

Deno.test("Subscription has one consumer: iteration and toReadableStream() exclude each other", {
  permissions: "none",
}, () => {
  const b = new Broadcast<Ev>(lagged);
  const streamed = b.subscribe();
  streamed.toReadableStream();
  assert.throws(() => streamed.toReadableStream(), TypeError);
  assert.throws(() => streamed[Symbol.asyncIterator](), TypeError);
  const iterated = b.subscribe();
  iterated[Symbol.asyncIterator]();
  assert.throws(() => iterated.toReadableStream(), TypeError);
});

Deno.test("Subscription offers consumers no producer methods and cannot be built with new", {
  permissions: "none",
}, () => {
  const sub = new Broadcast<Ev>(lagged).subscribe();
  assert.equal("push" in sub, false);
  assert.equal("end" in sub, false);
  const Ctor = sub.constructor as new (...args: unknown[]) => unknown;
  assert.throws(() => new Ctor(Symbol("forged"), {}), TypeError);
});

Deno.test("Subscription validates its options", { permissions: "none" }, () => {
  const b = new Broadcast<Ev>(lagged);
  assert.throws(() => b.subscribe({ capacity: 0 }), RangeError);
  assert.throws(() => b.subscribe({ capacity: 1.5 }), RangeError);
  // @ts-expect-error: invalid policy on purpose
  assert.throws(() => b.subscribe({ overflow: "block" }), TypeError);
});

Deno.test("Subscription ends when its signal aborts and leaves no listener", {
  permissions: "none",
}, async () => {
  const b = new Broadcast<Ev>(lagged);
  const controller = new AbortController();
  const signal = controller.signal;
  const listeners = countListeners(signal);
  for (let i = 0; i < 50; i++) b.subscribe({ signal }).unsubscribe();
  assert.equal(listeners(), 0, "unsubscribe removed every abort listener");
  const sub = b.subscribe({ signal });
  const pending = sub.next();
  controller.abort();
  assert.deepEqual(await pending, { done: true, value: undefined });
  assert.equal(b.size, 0);
  const late = b.subscribe({ signal });
  assert.equal(late.ended, true);
});

Deno.test("Subscription.toReadableStream() streams events and cancels", {
  permissions: "none",
}, async () => {
  const b = new Broadcast<Ev>(lagged);
  const sub = b.subscribe();
  b.publish(ev(1));
  b.publish(ev(2));
  b.close();
  assert.deepEqual(await Array.fromAsync(sub.toReadableStream()), [ev(1), ev(2)]);
  const other = b.subscribe();
  await other.toReadableStream().cancel();
  assert.equal(other.ended, true);
});

Deno.test("Broadcast.subscribe() after close gives the backlog then ends", {
  permissions: "none",
}, async () => {
  const b = new Broadcast<Ev>(lagged);
  b.close();
  assert.deepEqual(await drain(b.subscribe({}, [ev(9)])), [ev(9)]);
});

Deno.test("a stalled subscriber costs one drain, not one per chunk", async () => {
  const b = new Broadcast<Ev>(lagged);
  const stalled = b.subscribe({ capacity: 256 });
  const reader = b.subscribe({ capacity: 256 });
  for (let i = 0; i < 20; i++) b.publish(ev(i));
  assert.equal(b.pressured, true, "20 held events put the broadcast under pressure");
  const reading = (async () => {
    for (let i = 0; i < 20; i++) await reader.next();
  })();
  await b.drain(); // the reader catches up; the stalled one reads nothing
  await reading;
  assert.equal(reader.size, 0);
  assert.equal(stalled.size, 20);
  for (let i = 0; i < 20; i++) b.publish(ev(i));
  assert.equal(b.pressured, true, "the reader holds 20 again");
  for (let i = 0; i < 20; i++) await reader.next();
  assert.equal(b.pressured, false, "the stalled one is not waited for again");
  await stalled.next();
  assert.equal(b.pressured, true, "until it reads again");
  stalled.unsubscribe();
  reader.unsubscribe();
});
