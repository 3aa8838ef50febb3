/** Helpers of the compatibility tests (unit and e2e). */

import type { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import type { TransportFactory } from "../../src/transport/transport.ts";

/**
 * The scripted CLI's transport, stating in `info.cli` (as the subprocess
 * adapter does) what it asked of the CLI and learned about it.
 *
 * @param cli The scripted CLI.
 * @param launched The permission mode asked for, and the version `--version` printed.
 * @returns A transport factory.
 */
export function launchedBy(
  cli: ScriptedCli,
  launched: { readonly permissionMode?: string; readonly version?: string },
): TransportFactory {
  return async (context) => {
    const inner = await cli.transport(context);
    const info = { ...inner.info, cli: launched };
    return {
      readable: inner.readable,
      ...(inner.stderr && { stderr: inner.stderr }),
      closed: inner.closed,
      info,
      write: (line) => inner.write(line),
      endInput: () => inner.endInput(),
      close: () => inner.close(),
      [Symbol.asyncDispose]: () => inner[Symbol.asyncDispose](),
    };
  };
}

/**
 * The binary of a CLI version installed under `.cache/claude-cli-versions/`
 * (`.ci/install_claude.ts --version=<v>`), if it is there.
 *
 * @param version The version.
 * @returns Its path, or `undefined`.
 */
export function installedCli(version: string): string | undefined {
  const path = decodeURIComponent(
    new URL(
      `../../.cache/claude-cli-versions/${version}/node_modules/@anthropic-ai/claude-code/bin/claude.exe`,
      import.meta.url,
    ).pathname,
  );
  try {
    return Deno.statSync(path).isFile ? path : undefined;
  } catch {
    return undefined;
  }
}
