// deno-lint-ignore-file no-console -- examples print what they do
import { DuplexSession } from "@duplex/claude";
import { subprocess } from "@duplex/claude/subprocess";

await using session = await DuplexSession.start({
  transport: subprocess({ cwd: Deno.cwd(), includePartialMessages: true }),
});
const out = new TextEncoder();
const sub = session.subscribe({ capacity: 256 }); // bounded; the default policy drops the oldest
const printing = (async () => {
  for await (const event of sub) {
    if (event.type === "stream_event" && event.event.type === "content_block_delta") {
      const delta = event.event.delta as { text?: string };
      if (delta.text) await Deno.stdout.write(out.encode(delta.text));
    }
    if (event.type === "lagged") console.warn(`(missed ${event.count} events)`);
    if (event.type === "result") break; // leaving the loop unsubscribes
  }
})();
await session.send("Write a haiku about pipes.");
await printing;
console.log();
