/**
 * An {@linkcode AcpAgent} on scripted CLIs (one `ScriptedCli` per process it
 * launches), connected in memory to the recording {@linkcode AcpTestClient}.
 *
 * @module
 */

import { AcpAgent, type AcpAgentOptions } from "../../../adapters/acp/mod.ts";
import type { SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { controlSuccess, ScriptedCli } from "../../../src/testing/mod.ts";
import { AcpTestClient, type PermissionPolicy } from "../../e2e/_acp_client.ts";

/** What an initialize of the scripted CLIs answers (models and commands). */
export const INFO = {
  commands: [
    { name: "review", description: "Review the code", argumentHint: "<file>" },
    { name: "login", description: "Log in" },
    { name: "deploy (MCP)", description: "Deploy", argumentHint: "" },
  ],
  agents: [],
  models: [
    { value: "default", displayName: "Default (recommended)", description: "The default" },
    { value: "haiku", displayName: "Haiku", description: "Fast" },
  ],
  account: {},
  "claude_code_version": "2.1.332",
  "current_permission_mode": "default",
};

/** An agent, its client, and the CLIs it launched. */
export interface ScriptedAcp extends AsyncDisposable {
  readonly acp: AcpAgent;
  readonly client: AcpTestClient;
  /** One per launch, in order. */
  readonly clis: ScriptedCli[];
  /** The options of each launch, in order. */
  readonly launches: SubprocessOptions[];
}

/**
 * Starts an agent whose CLIs are scripted by `script`.
 *
 * @param script Adds the rules of each launched CLI (control requests the session sends are answered).
 * @param options More agent options.
 * @param policy The client's permission policy.
 * @returns The agent and its client.
 */
export function scriptedAcp(
  script: (cli: ScriptedCli) => void,
  options: AcpAgentOptions = {},
  policy?: PermissionPolicy,
): ScriptedAcp {
  const clis: ScriptedCli[] = [];
  const launches: SubprocessOptions[] = [];
  const acp = new AcpAgent({
    ...options,
    launch: (launched) => {
      launches.push(launched);
      const cli = new ScriptedCli({
        echo: true,
        ...(launched.resume ? { sessionId: launched.resume } : {}),
        ...(launched.sessionId ? { sessionId: launched.sessionId } : {}),
      });
      cli.on("control_request:initialize", (f) => [controlSuccess(String(f.request_id), INFO)]);
      for (const subtype of ["set_permission_mode", "set_model", "mcp_set_servers"]) {
        cli.on(`control_request:${subtype}`, (f) => [controlSuccess(String(f.request_id), {})]);
      }
      script(cli);
      clis.push(cli);
      return cli.transport;
    },
  });
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const connection = acp.connect({ readable: toAgent.readable, writable: toClient.writable });
  const client = new AcpTestClient(
    { readable: toClient.readable, writable: toAgent.writable },
    policy,
  );
  return {
    acp,
    client,
    clis,
    launches,
    async [Symbol.asyncDispose]() {
      client.close();
      connection.close();
      await Promise.allSettled([client.closed, connection.closed]);
      await acp.close();
    },
  };
}
