/**
 * What the soak's regression tests move a client between relays with: a
 * TCP proxy whose target can change and whose connections can be cut (a
 * balancer's choice changing under a live connection), and the stand-in
 * CLI's journals (`SOAK_JOURNAL`), one list of uuids per process.
 *
 * @module
 */

/**
 * A TCP proxy on loopback whose target can change; `cut()` closes every connection through it.
 *
 * @param target The port it forwards to first.
 */
export function cutProxy(target: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const piping: Promise<void>[] = [];
  let to = target;
  const accepting = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      piping.push((async () => {
        try {
          const upstream = await Deno.connect({ hostname: "127.0.0.1", port: to });
          open.add(upstream);
          await Promise.all([
            conn.readable.pipeTo(upstream.writable).catch(() => {}),
            upstream.readable.pipeTo(conn.writable).catch(() => {}),
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
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      open.clear();
    },
    async close() {
      listener.close();
      this.cut();
      await accepting;
      await Promise.all(piping);
    },
  };
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
