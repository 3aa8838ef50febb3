// deno-lint-ignore-file no-console -- it reports to the test on stdout
/**
 * Half-sent HTTP requests (slowloris) from a source address of their own, for
 * `proxy_e2e_test.ts`, so that the proxy's per-source limits count them
 * apart from the test's real client:
 *
 *     deno run --allow-net=127.0.0.1,<source> _slowloris.ts <port> <count> <source> <boundMs>
 *
 * Opens `count` connections to 127.0.0.1:<port> from `<source>` (another
 * loopback address, e.g. 127.0.0.2), sends each the start of a request head,
 * then one more header line every second, never the blank line that ends
 * it. Prints `{"attempted":n}` once every connection was attempted, then,
 * when all are closed or `boundMs` has passed (the rest are then closed
 * here), `{"closedMs":[…],"open":k,"answers":{"408":n,…}}`: when each was
 * closed by the other side (ms after the start), how many were still open,
 * and the status lines it answered with.
 *
 * @module
 */

import net from "node:net";

const [portText, countText, source, boundText] = Deno.args;
const port = Number(portText);
const count = Number(countText);
const bound = Number(boundText);
if (!(port > 0) || !(count > 0) || source === undefined || !(bound > 0)) {
  console.error("Usage: _slowloris.ts <port> <count> <source> <boundMs>");
  Deno.exit(2);
}

const started = Date.now();
const closedMs: number[] = [];
const answers: Record<string, number> = {};
const sockets = new Set<net.Socket>();
let attempted = 0;
const { promise: allAttempted, resolve: attemptedAll } = Promise.withResolvers<void>();
const { promise: allClosed, resolve: closedAll } = Promise.withResolvers<void>();

function attemptDone(): void {
  attempted++;
  if (attempted === count) attemptedAll();
}

for (let i = 0; i < count; i++) {
  const socket = net.connect({ host: "127.0.0.1", port, localAddress: source });
  sockets.add(socket);
  let trickle: ReturnType<typeof setInterval> | undefined;
  let attemptCounted = false;
  const counted = () => {
    if (attemptCounted) return;
    attemptCounted = true;
    attemptDone();
  };
  let answer = "";
  socket.on("connect", () => {
    counted();
    socket.write(`GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: slowloris\r\n`);
    let line = 0;
    trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(`X-Slow-${line++}: ${"x".repeat(8)}\r\n`);
    }, 1_000);
  });
  socket.on("data", (chunk: Uint8Array) => {
    if (answer.length < 64) answer += new TextDecoder().decode(chunk);
  });
  socket.on("error", () => counted());
  socket.on("close", () => {
    counted();
    clearInterval(trickle);
    if (sockets.delete(socket)) {
      closedMs.push(Date.now() - started);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? "none";
      answers[status] = (answers[status] ?? 0) + 1;
    }
    if (sockets.size === 0) closedAll();
  });
}

await allAttempted;
console.log(JSON.stringify({ attempted }));
const timer = setTimeout(closedAll, Math.max(0, bound - (Date.now() - started)));
await allClosed;
clearTimeout(timer);
const open = sockets.size;
for (const socket of [...sockets]) {
  sockets.delete(socket);
  socket.destroy();
}
console.log(JSON.stringify({ closedMs, open, answers }));
// Give the destroyed sockets their turn to close, then go.
setTimeout(() => Deno.exit(0), 100);
