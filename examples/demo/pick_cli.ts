/**
 * Which `claude` the demo's chat talks to: the real one when it can answer,
 * else the built-in stand-in.
 *
 * A real `claude` (from `CLAUDE_CLI`, else `PATH`) counts as able to answer
 * when it starts, answers `initialize` within 15 s and reports a credential
 * (an API key, a login token, or a cloud provider). Nothing is sent to the
 * model to find out, so the check costs nothing.
 *
 * @module
 */

import {
  DuplexError,
  DuplexSession,
  type PermissionDecision,
  type PermissionRequest,
} from "@duplex/claude";
import { resolveBinary, subprocess } from "@duplex/claude/subprocess";
import { standIn } from "./stand_in.ts";

/** How long the real CLI has to answer `initialize`. */
const PROBE_MS = 15_000;

/** The chat's session and the line that says what it talks to. */
export interface ChatSession {
  readonly session: DuplexSession;
  readonly banner: string;
  readonly real: boolean;
}

type Handler = (request: PermissionRequest) => Promise<PermissionDecision>;

/**
 * Starts the chat's session: the real CLI if it can answer, else the stand-in.
 *
 * @param onPermission Asks the person.
 * @returns The session and its banner.
 */
export async function startChatSession(onPermission: Handler): Promise<ChatSession> {
  const found = await findCli();
  if (found.path !== undefined) {
    const tried = await tryReal(found.path, onPermission);
    if ("session" in tried) return tried;
    found.reason = tried.reason;
  }
  const session = await DuplexSession.start({ transport: standIn(), onPermission });
  return {
    session,
    real: false,
    banner: `No claude that can answer (${found.reason}): using the built-in stand-in.`,
  };
}

async function findCli(): Promise<{ path?: string; reason: string }> {
  try {
    return { path: await resolveBinary(), reason: "" };
  } catch (error) {
    if (!(error instanceof DuplexError)) throw error;
    // "Cannot find claude: /x (from CLAUDE_CLI) is missing\nInstall it …": the first line.
    const why = error.message.replace(/^Cannot find claude: /, "").split("\n")[0]!;
    return {
      reason: Deno.env.get("CLAUDE_CLI") ? why : "no claude on PATH, and CLAUDE_CLI is not set",
    };
  }
}

/**
 * The folder claude works in: the one the demo was started from. `deno task`
 * runs the task in the folder of its deno.json and names the caller's folder
 * in `INIT_CWD`.
 */
function workFolder(): string {
  return Deno.env.get("INIT_CWD") || Deno.cwd();
}

async function tryReal(
  path: string,
  onPermission: Handler,
): Promise<ChatSession | { reason: string }> {
  let session: DuplexSession | undefined;
  try {
    session = await DuplexSession.start({
      transport: subprocess({
        pathToClaudeCodeExecutable: path,
        cwd: workFolder(),
        includePartialMessages: true,
        // The chat's own SIGINT listener interrupts turns; it closes the CLI on its way out.
        hostSignal: "ignore",
      }),
      initialize: true,
      onPermission,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const info = await Promise.race([
      session.initialized,
      new Promise<"timeout">((resolve) => timer = setTimeout(resolve, PROBE_MS, "timeout")),
    ]).finally(() => clearTimeout(timer));
    if (info === "timeout" || info === undefined) {
      throw new Error(`${path} did not answer initialize within ${PROBE_MS / 1000} s`);
    }
    const account = info.account;
    const credential = (account.tokenSource && account.tokenSource !== "none") ||
      (account.apiKeySource && account.apiKeySource !== "none") ||
      (account.apiProvider && account.apiProvider !== "firstParty");
    if (!credential) {
      throw new Error(
        `claude ${info.version} at ${path} has no API key or login (run claude once)`,
      );
    }
    return {
      session,
      real: true,
      banner: `Talking to claude ${info.version} (${path}, pid ${session.pid}) in ${workFolder()}.`,
    };
  } catch (error) {
    await session?.close();
    const why = error instanceof Error ? error.message.split("\n")[0]! : String(error);
    return { reason: why };
  }
}
