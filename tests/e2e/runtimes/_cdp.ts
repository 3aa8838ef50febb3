/**
 * The few Chrome DevTools protocol calls the browser test needs, over a
 * WebSocket from Deno (no Playwright, no browser download): open a page,
 * evaluate an expression in it, close the browser. Every call is bounded.
 *
 * @module
 */

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

interface EventWaiter {
  method: string;
  sessionId: string;
  resolve(): void;
}

/** A connection to a browser's DevTools endpoint. */
export class Cdp implements AsyncDisposable {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #events = new Set<EventWaiter>();
  readonly #closed: Promise<void>;
  #next = 1;

  /**
   * @param socket An open WebSocket to the browser's DevTools endpoint.
   */
  constructor(socket: WebSocket) {
    this.#socket = socket;
    this.#closed = new Promise((resolve) => socket.addEventListener("close", () => resolve()));
    socket.addEventListener("message", (event) => this.#message(String(event.data)));
    socket.addEventListener("close", () => {
      for (const pending of this.#pending.values()) {
        pending.reject(new Error("Cannot finish the DevTools call: the connection closed"));
      }
      this.#pending.clear();
    });
  }

  /**
   * Connects to `url` (the `ws://…/devtools/browser/…` the browser prints).
   *
   * @param url The endpoint.
   * @param timeoutMs A bound on connecting.
   * @returns The connection.
   */
  static async connect(url: string, timeoutMs = 10_000): Promise<Cdp> {
    const socket = new WebSocket(url);
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const timer = setTimeout(() => reject(new Error(`Cannot reach DevTools at ${url}`)), timeoutMs);
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`Cannot reach DevTools at ${url}`)), {
      once: true,
    });
    try {
      await promise;
    } catch (error) {
      socket.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return new Cdp(socket);
  }

  /**
   * Calls a DevTools method (bounded).
   *
   * @param method For example `Target.createTarget`.
   * @param params Its parameters.
   * @param options The page session to call it in, and the bound.
   * @returns Its result.
   */
  send(
    method: string,
    params: Record<string, unknown> = {},
    options: { sessionId?: string; timeoutMs?: number } = {},
  ): Promise<Record<string, unknown>> {
    const id = this.#next++;
    const timeoutMs = options.timeoutMs ?? 15_000;
    const { promise, resolve, reject } = Promise.withResolvers<Record<string, unknown>>();
    const timer = setTimeout(() => {
      this.#pending.delete(id);
      reject(new Error(`Cannot finish ${method}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    this.#pending.set(id, {
      resolve: (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    });
    const message = {
      id,
      method,
      params,
      ...(options.sessionId && { sessionId: options.sessionId }),
    };
    this.#socket.send(JSON.stringify(message));
    return promise;
  }

  /**
   * Opens `url` in a new page and evaluates `expression` there, awaiting the
   * promise it returns.
   *
   * @param url The page.
   * @param expression JavaScript evaluated in the page.
   * @param timeoutMs A bound on the evaluation.
   * @returns The value, by JSON.
   */
  async evaluateIn(url: string, expression: string, timeoutMs = 30_000): Promise<unknown> {
    const { targetId } = await this.send("Target.createTarget", { url: "about:blank" });
    const attached = await this.send("Target.attachToTarget", { targetId, flatten: true });
    const sessionId = String(attached.sessionId);
    await this.send("Page.enable", {}, { sessionId });
    const loaded = this.#event("Page.loadEventFired", sessionId, timeoutMs);
    await this.send("Page.navigate", { url }, { sessionId });
    await loaded;
    const evaluated = await this.send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    }, { sessionId, timeoutMs });
    const thrown = evaluated.exceptionDetails as { text?: string; exception?: unknown } | undefined;
    if (thrown) throw new Error(`The page threw: ${JSON.stringify(thrown)}`);
    await this.send("Target.closeTarget", { targetId });
    return (evaluated.result as { value?: unknown }).value;
  }

  #event(method: string, sessionId: string, timeoutMs: number): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const waiter: EventWaiter = {
      method,
      sessionId,
      resolve: () => {
        clearTimeout(timer);
        this.#events.delete(waiter);
        resolve();
      },
    };
    const timer = setTimeout(() => {
      this.#events.delete(waiter);
      reject(new Error(`Cannot see ${method} within ${timeoutMs} ms`));
    }, timeoutMs);
    this.#events.add(waiter);
    return promise;
  }

  #message(text: string): void {
    const message = JSON.parse(text) as {
      id?: number;
      method?: string;
      sessionId?: string;
      result?: Record<string, unknown>;
      error?: { message: string };
    };
    if (message.id === undefined) {
      for (const waiter of [...this.#events]) {
        if (waiter.method === message.method && waiter.sessionId === message.sessionId) {
          waiter.resolve();
        }
      }
      return;
    }
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    if (message.error) pending.reject(new Error(`DevTools: ${message.error.message}`));
    else pending.resolve(message.result ?? {});
  }

  /** Closes the connection (bounded). */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#socket.readyState < WebSocket.CLOSING) this.#socket.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#closed,
      new Promise((resolve) => timer = setTimeout(resolve, 2_000)),
    ]);
    clearTimeout(timer);
  }
}
