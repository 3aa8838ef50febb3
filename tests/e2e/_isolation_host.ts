/**
 * A host program for `isolation_e2e_test.ts`, standing in for a relay: it is
 * started with secrets in its own environment (as `deno task relay` reads
 * its signing keys from it), gives each tenant's CLI an environment of its
 * own (never its own variables), and runs the tenants' turns, approving
 * every tool call the way a tenant that approves its own `Bash` and `Read`
 * does.
 *
 * Argument: one JSON text {@linkcode Order}. Each step's prompt may name
 * `{{<tenant>.transcript}}`: the transcript file of that tenant's session
 * (known once it has had a turn). Reports on stdout, one JSON line per step
 * (`{ tenant, prompt, text, sessionId, pid }`), then `{"done":true}`; with
 * `hold`, it then starts a command that keeps running, reports
 * `{"waiting":true}` and waits to be killed.
 *
 * @module
 */

import { allow, DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";

/** One tenant's folders and variables. */
export interface Tenant {
  readonly home: string;
  readonly config: string;
  readonly work: string;
  /** The tenant's own variables (its CLI's environment, with the API's). */
  readonly env: Record<string, string>;
}

/** What the host does. */
export interface Order {
  readonly cli: string;
  readonly isolation: "none" | "bubblewrap";
  readonly tenants: Record<string, Tenant>;
  readonly steps: readonly { readonly tenant: string; readonly prompt: string }[];
  /** After the steps, a Bash command of the first step's tenant that keeps running. */
  readonly hold?: string;
}

/** A step's report. */
export interface StepReport {
  readonly tenant: string;
  readonly prompt: string;
  readonly text: string;
  readonly sessionId: string;
  readonly pid: number;
}

function report(value: unknown): void {
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(value) + "\n"));
}

async function transcriptOf(tenant: Tenant, sessionId: string): Promise<string> {
  for await (const project of Deno.readDir(`${tenant.config}/projects`)) {
    const file = `${tenant.config}/projects/${project.name}/${sessionId}.jsonl`;
    try {
      await Deno.stat(file);
      return file;
    } catch {
      // Another project.
    }
  }
  throw new Error(`Cannot find the transcript of ${sessionId} in ${tenant.config}`);
}

const order: Order = JSON.parse(Deno.args[0] ?? "{}");
const sessions = new Map<string, DuplexSession>();
const transcripts = new Map<string, string>();
try {
  for (const step of order.steps) {
    const tenant = order.tenants[step.tenant];
    if (tenant === undefined) throw new Error(`Cannot run the step: no tenant ${step.tenant}`);
    let session = sessions.get(step.tenant);
    if (session === undefined) {
      session = await DuplexSession.start({
        transport: subprocess({
          pathToClaudeCodeExecutable: order.cli,
          cwd: tenant.work,
          env: { ...tenant.env, HOME: tenant.home, CLAUDE_CONFIG_DIR: tenant.config },
          isolation: order.isolation,
        }),
        onPermission: () => allow(),
      });
      sessions.set(step.tenant, session);
    }
    const prompt = step.prompt.replaceAll(
      /\{\{(\w+)\.transcript\}\}/g,
      (_, name: string) => transcripts.get(name) ?? `<no transcript of ${name}>`,
    );
    const turn = await session.send(prompt, { timeoutMs: 30_000 });
    const sessionId = session.sessionId ?? "";
    transcripts.set(step.tenant, await transcriptOf(tenant, sessionId));
    report({ tenant: step.tenant, prompt, text: turn.result.text, sessionId, pid: session.pid });
  }
  report({ done: true });
  const first = sessions.get(order.steps[0]?.tenant ?? "");
  if (order.hold !== undefined && first !== undefined) {
    first.send(`[[tool:bash:${order.hold}]]`).catch(() => {});
    report({ waiting: true });
    await new Promise(() => setInterval(() => {}, 1 << 30));
  }
} finally {
  for (const session of sessions.values()) await session.close();
}
