// deno-lint-ignore-file no-console -- a skipped test says why, loudly
/**
 * The project's rule for a test whose component (the real CLI, a runtime,
 * PostgreSQL, tmux, the official SDK) is missing: locally it is IGNORED with
 * the reason printed; with `CI=true` it FAILS with that reason, because CI
 * installs every component and must run every test.
 *
 * - {@linkcode unavailableTest} registers the stand-in test in place of a
 *   whole test.
 * - {@linkcode unavailableStep} does the same inside a running test, for a
 *   component that can only be looked for asynchronously.
 *
 * @module
 */

function onCi(): boolean {
  return Deno.env.get("CI") === "true";
}

function announce(name: string, reason: string, ci: boolean): void {
  console.error(`\n!!! ${name}: ${ci ? "FAILS (CI=true)" : "IGNORED"}: ${reason} !!!\n`);
}

/**
 * Registers, in place of the test `name`, one that is IGNORED locally (the
 * reason printed) and FAILS with the reason under `CI=true`.
 *
 * @param name The name of the test that cannot run.
 * @param reason What is missing, and how to get it.
 */
export function unavailableTest(name: string, reason: string): void {
  const ci = onCi();
  announce(name, reason, ci);
  Deno.test({
    name: ci ? `${name} (unavailable: ${reason})` : `${name}: IGNORED (${reason})`,
    ignore: !ci,
    fn() {
      throw new Error(`Cannot run ${name}: ${reason}; CI must run it`);
    },
  });
}

/**
 * Inside a running test: under `CI=true` throws with the reason; locally
 * prints it and records an IGNORED step, so the report shows the skip.
 *
 * @param t The running test.
 * @param name What cannot run (a scenario of the test).
 * @param reason What is missing, and how to get it.
 * @returns Once the skip is recorded (locally).
 * @throws {Error} Under `CI=true`.
 */
export async function unavailableStep(
  t: Deno.TestContext,
  name: string,
  reason: string,
): Promise<void> {
  const ci = onCi();
  announce(name, reason, ci);
  if (ci) throw new Error(`Cannot run ${name}: ${reason}; CI must run it`);
  await t.step({ name: `${name}: IGNORED (${reason})`, ignore: true, fn() {} });
}
