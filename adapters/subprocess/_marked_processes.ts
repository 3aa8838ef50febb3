/**
 * Processes marked with a session's environment variable.
 *
 * The CLI's Bash tools run in their own sessions, and a command that puts a
 * process in the background (`nohup sleep 300 &`) leaves it reparented to
 * init before the tool even returns: neither the CLI's process group nor a
 * parent-id walk finds it at close. Every process the CLI starts inherits
 * its environment, though, so the adapter gives each CLI a unique marker
 * variable and, when closing, ends every process that still carries it.
 *
 * Reads `/proc/<pid>/environ` (Linux; Deno asks for `--allow-all` to read
 * `/proc`), else asks `ps` (`--allow-run=ps`), else finds nothing.
 *
 * @module
 */

/** The environment variable that marks a session's processes. */
export const MARKER_VARIABLE = "DUPLEX_CLAUDE_SESSION";

/** Every process, its pid and its command line followed by its environment (`e`). */
const PS_ARGS = ["-e", "-ww", "-o", "pid=,args=", "e"];

/** How often a sweep checks whether the marked processes have ended. */
const POLL_MS = 25;

function denied(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
}

async function fromProc(entry: string): Promise<number[] | undefined> {
  const pids: number[] = [];
  try {
    for await (const dir of Deno.readDir("/proc")) {
      const pid = Number(dir.name);
      if (!Number.isInteger(pid) || pid === Deno.pid) continue;
      try {
        const environ = await Deno.readTextFile(`/proc/${pid}/environ`);
        if (environ.split("\0").includes(entry)) pids.push(pid);
      } catch (error) {
        if (error instanceof Deno.errors.NotCapable) return undefined;
        // The process ended meanwhile, or belongs to another user.
      }
    }
  } catch {
    return undefined; // no /proc, or not permitted to read it
  }
  return pids;
}

async function fromPs(entry: string): Promise<number[]> {
  try {
    const output = await new Deno.Command("ps", {
      args: PS_ARGS,
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).output();
    return output.success ? parsePs(new TextDecoder().decode(output.stdout), entry) : [];
  } catch {
    return []; // no ps, or not permitted to run it
  }
}

/* The pids of `ps -e -ww -o pid=,args= e` lines whose environment holds `entry`. */
function parsePs(text: string, entry: string): number[] {
  const pids: number[] = [];
  for (const line of text.split("\n")) {
    const match = /^\s*(\d+)\s(.*)$/.exec(line);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid !== Deno.pid && ` ${match[2]} `.includes(` ${entry} `)) pids.push(pid);
  }
  return pids;
}

/**
 * Finds the live processes whose environment holds `MARKER_VARIABLE=marker`.
 *
 * @param marker The session's marker value.
 * @returns Their pids (empty when nothing can be read).
 */
export async function findMarked(marker: string): Promise<number[]> {
  const entry = `${MARKER_VARIABLE}=${marker}`;
  return await fromProc(entry) ?? await fromPs(entry);
}

/**
 * Ends every process still marked: SIGTERM, up to `graceMs` to go, then SIGKILL.
 *
 * @param marker The session's marker value.
 * @param graceMs How long the processes get between SIGTERM and SIGKILL.
 * @returns How many processes were found.
 */
export async function sweepMarked(marker: string, graceMs: number): Promise<number> {
  let alive = await findMarked(marker);
  const found = alive.length;
  if (found === 0) return 0;
  if (!signalAll(alive, "SIGTERM")) return found;
  const deadline = Date.now() + graceMs;
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    alive = await findMarked(marker);
  }
  signalAll(alive, "SIGKILL");
  return found;
}

/* Returns false when signals are not permitted at all. */
function signalAll(pids: readonly number[], signal: Deno.Signal): boolean {
  for (const pid of pids) {
    try {
      Deno.kill(pid, signal);
    } catch (error) {
      if (denied(error)) return false;
      // Already gone.
    }
  }
  return true;
}

/**
 * Signals the marked processes now, without waiting (for the host's exit,
 * when nothing asynchronous can run). Reads `/proc` only.
 *
 * @param marker The session's marker value.
 * @param signal The signal to send.
 */
export function signalMarkedSync(marker: string, signal: Deno.Signal): void {
  const entry = `${MARKER_VARIABLE}=${marker}`;
  for (const pid of findMarkedSync(entry)) {
    try {
      Deno.kill(pid, signal);
    } catch {
      // Ended meanwhile, or not permitted.
    }
  }
}

function findMarkedSync(entry: string): number[] {
  const pids: number[] = [];
  try {
    for (const dir of Deno.readDirSync("/proc")) {
      const pid = Number(dir.name);
      if (!Number.isInteger(pid) || pid === Deno.pid) continue;
      try {
        if (Deno.readTextFileSync(`/proc/${pid}/environ`).split("\0").includes(entry)) {
          pids.push(pid);
        }
      } catch (error) {
        if (error instanceof Deno.errors.NotCapable) throw error;
        // Ended meanwhile, or another user's.
      }
    }
    return pids;
  } catch {
    // No /proc, or not permitted to read it: ask ps.
  }
  try {
    const output = new Deno.Command("ps", {
      args: PS_ARGS,
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).outputSync();
    return output.success ? parsePs(new TextDecoder().decode(output.stdout), entry) : [];
  } catch {
    return []; // no ps, or not permitted to run it
  }
}
