/**
 * A relay program as a process of its own (`adapters/relay/main.ts`, or a
 * script that calls `serveRelay()`): started with the environment given and
 * nothing else of the test's but `HOME` and `PATH` (unless given), its URL
 * read from its first line `Relay listening on ws://…`.
 */

/** The path of `deno task relay`'s program. */
export const MAIN: string = decodeURIComponent(
  new URL("../../../adapters/relay/main.ts", import.meta.url).pathname,
);

/** How long {@linkcode RelayProgram.output} waits for the exit. */
const EXIT_LIMIT_MS = 20_000;

/** A started relay program. */
export interface RelayProgram {
  readonly child: Deno.ChildProcess;
  /** Its URL (empty when it printed none within 15 s). */
  readonly url: string;
  /**
   * Waits for its exit, 20 s at most (then it is killed and this rejects):
   * the code, and everything it printed.
   */
  output(): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Kills it (SIGKILL) if it still runs, and reaps it. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a relay program; resolves once it printed its URL (or after 15 s).
 *
 * @param env Its environment (`NO_COLOR` added, the test's `HOME` and `PATH` unless given).
 * @param script The program (default: main.ts).
 * @param args The program's arguments.
 */
export async function startProgram(
  env: Record<string, string>,
  script: string = MAIN,
  args: readonly string[] = [],
): Promise<RelayProgram> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", "--quiet", script, ...args],
    env: {
      HOME: Deno.env.get("HOME") ?? "/tmp",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...env,
      NO_COLOR: "1",
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  let text = "";
  const deadline = Date.now() + 15_000;
  while (!text.includes("\n") && Date.now() < deadline) {
    const { done, value } = await stdout.read();
    if (done) break;
    text += value;
  }
  const url = /Relay listening on (ws:\S+)/.exec(text)?.[1] ?? "";
  let exited: Promise<{ code: number; stdout: string; stderr: string }> | undefined;
  const output = () =>
    exited ??= (async () => {
      const rest = (async () => {
        for (;;) {
          const { done, value } = await stdout.read();
          if (done) return;
          text += value;
        }
      })();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch {
            // Exited just now.
          }
          reject(new Error(`The relay program did not exit within ${EXIT_LIMIT_MS} ms`));
        }, EXIT_LIMIT_MS);
      });
      let status: Deno.CommandStatus;
      try {
        status = await Promise.race([child.status, late]);
      } finally {
        clearTimeout(timer);
        await child.status;
      }
      await rest;
      return { code: status.code, stdout: text, stderr: await stderr };
    })();
  return {
    child,
    url,
    output,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch {
        // Exited.
      }
      await output().catch(() => {});
    },
  };
}
