/**
 * The remote transport where runtimes differ from Deno: no global
 * `WebSocket`, a `send` that throws, binary frames as views or Blobs,
 * permissions refused, connections refused in the runtime's own words, a
 * transport that cannot be built on an open socket.
 */

import assert from "node:assert/strict";
import {
  remote,
  type RemoteOptions,
  type WebSocketConstructor,
} from "../../../adapters/remote/mod.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { CLOSE, encodeOutput } from "../../../src/wire/wire.ts";
import {
  connect,
  FakeRelay,
  handshake,
  openRemote,
  rejection,
  TOKEN,
  within,
  withRelay,
} from "./_fake_relay.ts";

const PERMISSIONS: Deno.PermissionOptions = { net: ["127.0.0.1"] };
const NativeWebSocket = globalThis.WebSocket;

/** What opening a transport to an address where nothing listens rejects with. */
function failedStart(options: Partial<RemoteOptions> = {}): Promise<unknown> {
  return rejection(
    remote({ url: "ws://127.0.0.1:9/v1", token: TOKEN, ...options })({
      signal: new AbortController().signal,
    }),
  );
}

async function read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { value, done } = await within(reader.read(), "a chunk of output");
  return done ? "<done>" : new TextDecoder().decode(value);
}

/** A WebSocket whose instances a test can reach (to play what a runtime would deliver). */
function recording(): { Socket: WebSocketConstructor; sockets: WebSocket[] } {
  const sockets: WebSocket[] = [];
  class Recorded extends NativeWebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
  }
  return { Socket: Recorded, sockets };
}

Deno.test("remote() works with a given WebSocket in a runtime that has no global one", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const global = Object.getOwnPropertyDescriptor(globalThis, "WebSocket")!;
    Object.defineProperty(globalThis, "WebSocket", {
      configurable: true,
      writable: true,
      value: undefined,
    });
    try {
      const { transport, connection } = await connect(relay, {
        WebSocket: NativeWebSocket,
        reconnect: false,
      });
      const written = transport.write('{"n":1}');
      assert.deepEqual(await within(connection.next("in"), "the input"), {
        t: "in",
        seq: 1,
        line: '{"n":1}',
      });
      connection.send({ t: "ack", seq: 1 });
      await within(written, "the write");
      connection.send({
        t: "exit",
        seq: 1,
        exit: { code: 0, signal: null, stderrTail: "", requested: false },
      });
      assert.equal((await within(transport.closed, "the exit")).code, 0);
    } finally {
      Object.defineProperty(globalThis, "WebSocket", global);
    }
  }));

Deno.test("remote() ends in the runtime's words when a send throws (no close event follows)", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    const words = "Cannot perform I/O on behalf of a different request.";
    class Throwing extends NativeWebSocket {
      #sent = 0;
      override send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
        if (this.#sent++ > 0) throw new TypeError(words); // the hello goes; later sends throw
        super.send(data);
      }
    }
    const { transport } = await connect(relay, { WebSocket: Throwing, reconnect: false });
    const error = await rejection(transport.write("{}"), "the write");
    assert.ok(isDuplexError(error, "process_exited"), String(error));
    assert.ok(error.message.includes(words), error.message);
    const exit = await within(transport.closed, "the exit");
    assert.match(exit.reason ?? "", /sending to the relay failed: Cannot perform I\/O/);
  }));

Deno.test("remote() reads binary frames that come as views or Blobs, in order", {
  permissions: PERMISSIONS,
}, async (t) => {
  const frame = (seq: number, text: string) => encodeOutput(seq, new TextEncoder().encode(text));
  const deliver = (socket: WebSocket, data: unknown) =>
    socket.dispatchEvent(new MessageEvent("message", { data }));

  await t.step(
    "a typed-array view (into a larger buffer) is read, and copied",
    () =>
      withRelay(async (relay) => {
        const net = recording();
        const { transport } = await connect(relay, { WebSocket: net.Socket, closeTimeoutMs: 100 });
        const reader = transport.readable.getReader();
        const bytes = frame(1, "one\n");
        const pool = new Uint8Array(bytes.length + 16);
        pool.set(bytes, 8);
        deliver(net.sockets[0]!, pool.subarray(8, 8 + bytes.length));
        deliver(net.sockets[0]!, new DataView(frame(2, "two\n").buffer));
        assert.equal(await read(reader), "one\n");
        assert.equal(await read(reader), "two\n");
        reader.releaseLock();
        await transport.close();
      }),
  );

  await t.step("a Blob is read before the frames after it", () =>
    withRelay(async (relay) => {
      const net = recording();
      const { transport } = await connect(relay, { WebSocket: net.Socket, closeTimeoutMs: 100 });
      const reader = transport.readable.getReader();
      deliver(net.sockets[0]!, new Blob([frame(1, "blob\n")]));
      deliver(net.sockets[0]!, frame(2, "after\n").buffer);
      assert.equal(await read(reader), "blob\n");
      assert.equal(await read(reader), "after\n");
      reader.releaseLock();
      await transport.close();
    }));

  await t.step(
    "anything else ends the transport with a protocol error",
    () =>
      withRelay(async (relay) => {
        const net = recording();
        const { transport, connection } = await connect(relay, {
          WebSocket: net.Socket,
          reconnect: false,
        });
        deliver(net.sockets[0]!, { not: "a frame" });
        const exit = await within(transport.closed, "the exit");
        assert.match(
          exit.reason ?? "",
          /broke the protocol: a frame of a type no WebSocket delivers/,
        );
        assert.equal(await within(connection.closedCode, "the close"), CLOSE.relayBrokeProtocol);
      }),
  );
});

Deno.test("remote() reports a connection the runtime does not permit as not_permitted", {
  permissions: { net: false },
}, async (t) => {
  await t.step("Deno without --allow-net names the flag", async () => {
    const error = await failedStart();
    assert.ok(isDuplexError(error, "not_permitted"), String(error));
    assert.match(error.message, /--allow-net=127\.0\.0\.1:9\b/);
    assert.equal((error.cause as Error).name, "NotCapable");
  });
  await t.step("a browser's SecurityError", async () => {
    class Blocked {
      constructor() {
        throw new DOMException("The port is blocked", "SecurityError");
      }
    }
    const error = await failedStart({ WebSocket: Blocked as unknown as WebSocketConstructor });
    assert.ok(isDuplexError(error, "not_permitted"), String(error));
    assert.match(error.message, /SecurityError: The port is blocked/);
  });
});

Deno.test("remote() says what the runtime said when the connection is refused", {
  permissions: PERMISSIONS,
}, async (t) => {
  await t.step("the error event's message, the close code and reason", async () => {
    /** A runtime's WebSocket that fails the way a refused connection does. */
    class Refused extends EventTarget {
      readyState = 0;
      protocol = "";
      binaryType = "blob";
      constructor() {
        super();
        setTimeout(() => {
          this.readyState = 3;
          this.dispatchEvent(
            new ErrorEvent("error", { message: "connect ECONNREFUSED 127.0.0.1:9" }),
          );
          this.dispatchEvent(new CloseEvent("close", { code: 1006, reason: "refused" }));
        }, 0);
      }
      close(): void {}
      send(): void {}
    }
    const error = await failedStart({ WebSocket: Refused as unknown as WebSocketConstructor });
    assert.ok(isDuplexError(error, "closed"), String(error));
    assert.match(error.message, /connect ECONNREFUSED 127\.0\.0\.1:9 \(close code 1006, refused\)/);
    assert.equal(error.exit?.closeCode, 1006);
    assert.ok(error.cause instanceof ErrorEvent);
  });
  await t.step("Deno's own words when nothing listens", async () => {
    const relay = new FakeRelay();
    const url = relay.url;
    await relay.close();
    const error = await failedStart({ url });
    assert.ok(isDuplexError(error, "closed"), String(error));
    const said = (error.cause as { message?: string }).message ?? "";
    assert.ok(said !== "" && error.message.includes(said), `${error.message} / ${said}`);
    assert.match(error.message, /close code \d+/);
  });
});

Deno.test("remote() closes the socket when the transport cannot be built on it", {
  permissions: PERMISSIONS,
}, () =>
  withRelay(async (relay) => {
    class Sabotaged extends NativeWebSocket {
      #helloSent = false;
      override send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
        super.send(data);
        this.#helloSent = true;
      }
      override addEventListener(...args: Parameters<WebSocket["addEventListener"]>): void {
        if (this.#helloSent) throw new Error("sabotaged listener");
        super.addEventListener(...args);
      }
    }
    const opening = openRemote(relay, { WebSocket: Sabotaged });
    const connection = await within(relay.accept(), "the connection");
    await handshake(connection);
    await assert.rejects(within(opening, "the failure"), /sabotaged listener/);
    assert.equal(await within(connection.closedCode, "the socket to close"), 1000);
  }));
