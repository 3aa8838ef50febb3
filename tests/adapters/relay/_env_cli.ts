/**
 * The stand-in CLI that shows what a tenant can read of its environment: it
 * first writes one stdout line `{"type":"fake_env","pid","cwd","env"}` with
 * its whole environment (what a tenant's approved `Bash(env)` would print),
 * then runs `tests/fixtures/fake_claude.ts` (same environment variables).
 */

const line = { type: "fake_env", pid: Deno.pid, cwd: Deno.cwd(), env: Deno.env.toObject() };
await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(line) + "\n"));
await import("../../fixtures/fake_claude.ts");
