/**
 * The doctor's `bubblewrap` line, for `isolation: "bubblewrap"`: `bwrap`
 * found on PATH as the adapter finds it (`findBubblewrap`), Deno permitted
 * to run it, and able to make the user namespace the sandbox needs
 * (`bwrap --unshare-user --ro-bind / / true`, bounded).
 *
 * @module
 */

import { DuplexError, excerptOf } from "../../src/errors.ts";
import { findBubblewrap } from "./_isolation.ts";
import { granted, splitAdvice } from "./_doctor_local.ts";
import { runBounded } from "./_doctor_run.ts";
import type { DoctorCheck } from "./doctor.ts";
import type { DoctorContext } from "./_doctor_context.ts";

/** The user-namespace probe: what the sandbox needs of `bwrap`, and nothing more. */
const NAMESPACE_PROBE = ["--unshare-user", "--ro-bind", "/", "/", "true"];

/**
 * The `bubblewrap` line: `bwrap` on PATH, and able to make a user namespace.
 *
 * @param context The doctor's context.
 * @returns The line.
 */
export async function checkBubblewrap(context: DoctorContext): Promise<DoctorCheck> {
  let path: string;
  try {
    path = await findBubblewrap();
  } catch (error) {
    if (!(error instanceof DuplexError)) throw error;
    return { check: "bubblewrap", status: "fail", ...splitAdvice(error.message) };
  }
  if (!granted({ name: "run", command: path })) {
    return {
      check: "bubblewrap",
      status: "fail",
      finding: `Deno may not run ${path}`,
      fix: `run with --allow-run=${path}`,
    };
  }
  const ran = await runBounded(path, NAMESPACE_PROBE, {
    timeoutMs: context.timeoutMs,
    signal: context.signal,
  });
  const none = 'or pass isolation: "none" to run claude unsandboxed';
  if (ran.state === "exited" && ran.code === 0) {
    return {
      check: "bubblewrap",
      status: "ok",
      finding: `${path} makes a sandbox (bwrap ${NAMESPACE_PROBE.join(" ")})`,
    };
  }
  const why = ran.state === "exited"
    ? `exit code ${ran.code}${ran.stderr.trim() ? `: ${excerptOf(ran.stderr.trim(), 160)}` : ""}`
    : ran.state === "timed_out"
    ? `no answer within ${ran.ms} ms`
    : ran.message;
  return {
    check: "bubblewrap",
    status: "fail",
    finding: `${path} cannot make a sandbox here (${why})`,
    fix: "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on " +
      "Ubuntu 23.10 and later an AppArmor profile for bwrap, or " +
      `kernel.apparmor_restrict_unprivileged_userns=0), ${none}`,
  };
}
