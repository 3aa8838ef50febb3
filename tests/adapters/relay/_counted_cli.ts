/**
 * The stand-in CLI of the relay tests, counting its starts: it appends its
 * pid to the file named by `RELAY_SPAWN_LOG`, and, when `RELAY_ENV_LOG`
 * names a file, one JSON line of the trace context in its environment
 * (`TRACEPARENT`, `TRACESTATE`, null when unset); then it runs
 * `tests/fixtures/fake_claude.ts` (same environment variables), or, with
 * `RELAY_TEST_STALL=1`, never reads its stdin (a CLI busy for a long time)
 * until it is terminated.
 */

const log = Deno.env.get("RELAY_SPAWN_LOG");
if (log !== undefined && log !== "") {
  await Deno.writeTextFile(log, `${Deno.pid}\n`, { append: true });
}
const envLog = Deno.env.get("RELAY_ENV_LOG");
if (envLog !== undefined && envLog !== "") {
  const seen = {
    pid: Deno.pid,
    TRACEPARENT: Deno.env.get("TRACEPARENT") ?? null,
    TRACESTATE: Deno.env.get("TRACESTATE") ?? null,
  };
  await Deno.writeTextFile(envLog, JSON.stringify(seen) + "\n", { append: true });
}
if (Deno.env.get("RELAY_TEST_STALL") === "1") {
  setInterval(() => {}, 1 << 30);
} else {
  await import("../../fixtures/fake_claude.ts");
}
