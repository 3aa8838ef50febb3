/**
 * What the soak's regression tests move a client between relays with: a
 * TCP proxy whose target can change and whose connections can be cut (a
 * balancer's choice changing under a live connection), and the stand-in
 * CLI's journals (`SOAK_JOURNAL`), one list of uuids per process.
 *
 * @module
 */

/** One client's connection through the proxy, and its upstream. */
interface Pair {
  readonly client: Deno.Conn;
  upstream?: Deno.Conn | undefined;
  /** While set, what the client sends is kept here instead of forwarded. */
  held?: Uint8Array[] | undefined;
}

/**
 * A TCP proxy on loopback whose target can change; `cut()` closes every
 * connection through it, and `stall()` then `leave()` and `release()` play
 * a stalled relay host: what clients send is held, the clients' side is cut
 * (they go elsewhere), and later the relay reads what was held, then the
 * close.
 *
 * @param target The port it forwards to first.
 */
export function cutProxy(target: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const pairs = new Set<Pair>();
  const piping: Promise<void>[] = [];
  let to = target;
  const accepting = (async () => {
    for await (const client of listener) {
      const pair: Pair = { client };
      pairs.add(pair);
      piping.push((async () => {
        try {
          const upstream = pair.upstream = await Deno.connect({ hostname: "127.0.0.1", port: to });
          if (!pairs.has(pair)) return close(upstream);
          await Promise.all([
            forward(pair, upstream).catch(() => {}),
            upstream.readable.pipeTo(client.writable).catch(() => {}),
          ]);
        } catch { /* cut */ }
      })());
    }
  })().catch(() => {});
  return {
    url: `ws://127.0.0.1:${listener.addr.port}/v1`,
    point(port: number) {
      to = port;
    },
    cut() {
      for (const pair of pairs) {
        close(pair.client);
        close(pair.upstream);
      }
      pairs.clear();
    },
    /** From now on, what the clients connected now send is held back from their relay. */
    stall() {
      for (const pair of pairs) pair.held ??= [];
    },
    /** Cuts the stalled connections on the clients' side only: their relay has not noticed. */
    leave() {
      for (const pair of pairs) if (pair.held) close(pair.client);
    },
    /** The stalled relay reads what was held, then the connections' end. */
    async release() {
      for (const pair of [...pairs]) {
        const held = pair.held;
        if (held === undefined) continue;
        pairs.delete(pair);
        pair.held = undefined;
        try {
          const writer = pair.upstream?.writable.getWriter();
          for (const bytes of held) await writer?.write(bytes);
        } catch { /* closed */ }
        close(pair.upstream);
      }
    },
    async close() {
      listener.close();
      this.cut();
      await accepting;
      await Promise.all(piping);
    },
  };
}

/* Closes a connection that may be closed already. */
function close(conn: Deno.Conn | undefined): void {
  try {
    conn?.close();
  } catch { /* closed */ }
}

/* Client to upstream, holding what comes while the pair is stalled. */
async function forward(pair: Pair, upstream: Deno.Conn): Promise<void> {
  const writer = upstream.writable.getWriter();
  try {
    for await (const bytes of pair.client.readable) {
      if (pair.held) pair.held.push(bytes);
      else await writer.write(bytes);
    }
  } finally {
    writer.releaseLock();
    if (!pair.held) close(upstream);
  }
}

/**
 * What each process of a conversation wrote, in the order they started:
 * the transcript it loaded, then each entry it wrote (uuids).
 *
 * @param dir The journal folder (`SOAK_JOURNAL`).
 * @param sessionId The CLI's session id.
 */
export async function journalOf(dir: string, sessionId: string): Promise<string[][]> {
  const files: string[] = [];
  for await (const file of Deno.readDir(`${dir}/${sessionId}`)) files.push(file.name);
  files.sort();
  const out: string[][] = [];
  for (const file of files) {
    const lines = (await Deno.readTextFile(`${dir}/${sessionId}/${file}`)).trim().split("\n")
      .map((line) => JSON.parse(line));
    out.push([...lines[0].loaded, ...lines.slice(1).map((line: { uuid: string }) => line.uuid)]);
  }
  return out;
}
