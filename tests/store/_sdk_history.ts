/**
 * {@linkcode sdkHistory}: the official SDK's history functions, run in a
 * child `deno run` (`_sdk_history_probe.ts`) with what the SDK's module
 * needs, for tests that compare ours with them (unit and e2e).
 *
 * @module
 */

import { sdkEntry } from "../bench/install_sdk.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const PROBE = new URL("./_sdk_history_probe.ts", import.meta.url).pathname;

/** One SDK call's outcome. */
export type SdkResult = { readonly ok: unknown } | { readonly error: string };

/** What to run: see `_sdk_history_probe.ts`. */
export interface SdkHistoryRequest {
  readonly configDir?: string;
  readonly store?: readonly { key: unknown; entries: readonly unknown[] }[];
  readonly calls: readonly { fn: string; args: readonly unknown[] }[];
}

/** Whether the official SDK is installed (`deno run -P=install tests/bench/install_sdk.ts`). */
export function sdkInstalled(): boolean {
  try {
    return Deno.statSync(sdkEntry()).isFile;
  } catch {
    return false;
  }
}

/**
 * Runs SDK calls in a child process (bounded: killed after 60 s).
 *
 * @param request The calls, the config folder, the store's entries.
 * @returns One result per call.
 */
export async function sdkHistory(request: SdkHistoryRequest): Promise<SdkResult[]> {
  const write = request.configDir ? [`--allow-write=${request.configDir}`] : [];
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-check",
      "--allow-read",
      "--allow-env",
      "--allow-sys=homedir",
      ...write,
      PROBE,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(request)));
    await writer.close();
    const { code, stdout, stderr } = await child.output();
    const out = new TextDecoder().decode(stdout);
    if (code !== 0) {
      throw new Error(`The SDK probe failed (${code}): ${out}${new TextDecoder().decode(stderr)}`);
    }
    return JSON.parse(out.trim().split("\n").at(-1) ?? "[]");
  } finally {
    clearTimeout(timer);
  }
}

/** The value of a result, or a thrown error with the SDK's message. */
export function okOf(result: SdkResult | undefined): unknown {
  if (result === undefined) throw new Error("The SDK probe gave no result");
  if ("error" in result) throw new Error(`The SDK threw: ${result.error}`);
  return result.ok;
}

/**
 * The fields of a `SessionMessage` that ours and the SDK's share (ours add
 * `entry` and keep `timestamp` optional; the SDK's newer ones add more).
 *
 * @param messages Ours or the SDK's.
 * @returns Each message's `type`, `uuid`, `session_id`, `message`,
 * `parent_tool_use_id`, `parent_agent_id`.
 */
export function sharedFields(messages: readonly object[]): Record<string, unknown>[] {
  return messages.map((item) => {
    const m = item as Record<string, unknown>;
    return {
      type: m.type,
      uuid: m.uuid,
      "session_id": m.session_id,
      message: m.message,
      "parent_tool_use_id": m.parent_tool_use_id,
      "parent_agent_id": m.parent_agent_id,
    };
  });
}
