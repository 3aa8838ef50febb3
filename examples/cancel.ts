// deno-lint-ignore-file no-console -- examples print what they do
import { DuplexSession } from "@duplex/claude";
import { subprocess } from "@duplex/claude/subprocess";

await using session = await DuplexSession.start({ transport: subprocess({ cwd: Deno.cwd() }) });
try {
  await session.send("Refactor everything, slowly.", { signal: AbortSignal.timeout(30_000) });
} catch (error) {
  if (!(error instanceof DOMException && error.name === "TimeoutError")) throw error;
  // The CLI got an interrupt and ended the turn: the session is ready for the next one.
  console.log("Gave up after 30 s");
}
const receipt = await session.interrupt(); // also callable directly; harmless when idle
console.log("interrupt acknowledged; still queued:", receipt.stillQueued);
console.log((await session.send("Say done.")).result.text);
