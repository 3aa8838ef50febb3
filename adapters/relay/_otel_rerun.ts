/**
 * `deno task relay --otel`: the relay under Deno's built-in OpenTelemetry.
 * Deno reads `OTEL_DENO` when it starts, so a relay started without it runs
 * itself again with `OTEL_DENO=true` (and the rest of its environment), in a
 * process group of its own, and stands between it and the world: a SIGINT
 * or SIGTERM it gets is passed on once, through the child's stdin (a line,
 * then the end of it), so a terminal's Ctrl-C is not seen twice; the child
 * also closes when that pipe ends because this process died. This process
 * exits with the child's code.
 *
 * @module
 */

/** Set in the child's environment: its stdin is the parent's line to it. */
export const OTEL_CHILD = "DUPLEX_RELAY_OTEL_CHILD";

/** `@opentelemetry/api`, pinned as in `deno.json`; loaded only with `--otel`. */
export const OTEL_API = "npm:@opentelemetry/api@1.9.1";

/**
 * Runs this program again under `OTEL_DENO=true` and exits with its code.
 *
 * @param args This program's arguments, passed on.
 * @returns Never: it exits.
 * @throws {Error} When the child cannot be spawned (no `--allow-run` for Deno itself).
 */
export async function rerunUnderOtel(args: readonly string[]): Promise<never> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", Deno.mainModule, ...args],
    env: { OTEL_DENO: "true", [OTEL_CHILD]: "1" },
    stdin: "piped",
    stdout: "inherit",
    stderr: "inherit",
    detached: true, // a terminal's SIGINT reaches this process only, which passes it on once
  }).spawn();
  const writer = child.stdin.getWriter();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  const onSignal = (): void => {
    for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
    writer.write(new TextEncoder().encode("close\n")).then(() => writer.close()).catch(() => {});
  };
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  const status = await child.status;
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  Deno.exit(status.code);
}

/**
 * In the child: resolves when the parent asks it to close (a line on stdin)
 * or is gone (stdin ended).
 *
 * @returns Resolves once; never rejects.
 */
export async function parentLeft(): Promise<void> {
  try {
    for await (const _ of Deno.stdin.readable) return;
  } catch {
    // A broken pipe is a parent gone as well.
  }
}
