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
  initialize(capabilities: ClientCapabilities = {}): ReturnType<ClientContext["request"]> {
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
