/**
 * A WebSocket client on a raw TCP connection, for the tests that need one
 * that misbehaves: it never answers the relay's close frame by itself, and
 * sends what it is told when it is told.
 */

import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { TOKEN } from "./_client.ts";

/** A frame the relay sent. */
export interface RawFrame {
  readonly opcode: number;
  readonly payload: Uint8Array;
  /** When it arrived (`Date.now()`). */
  readonly at: number;
}

/** The opcodes the tests look for. */
export const OPCODE = { text: 1, close: 8 } as const;

/**
 * A WebSocket upgrade request for the relay on 127.0.0.1, as bytes to write.
 *
 * @param port The relay's port.
 * @param headers Header lines after the fixed ones (a subprotocol with a token, an origin, ...).
 */
export function upgradeRequest(port: number, headers: readonly string[]): Uint8Array {
  return new TextEncoder().encode(
    [
      "GET /v1 HTTP/1.1",
      `Host: 127.0.0.1:${port}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Version: 13",
      ...headers,
      "",
      "",
    ].join("\r\n"),
  );
}

/** One connection: the upgrade's status, then the frames as they come. */
export class RawClient implements AsyncDisposable {
  readonly status: number;
  readonly frames: RawFrame[] = [];
  readonly #connection: Deno.TcpConn;
  readonly #reading: Promise<void>;
  #ended = false;
  #closed = false;

  private constructor(connection: Deno.TcpConn, status: number, rest: Uint8Array) {
    this.#connection = connection;
    this.status = status;
    this.#reading = this.#read(rest);
  }

  /**
   * Connects and sends the upgrade request (the test token in the subprotocol).
   *
   * @param port The relay's port on 127.0.0.1.
   * @param token The bearer token.
   */
  static async open(port: number, token = TOKEN): Promise<RawClient> {
    const connection = await Deno.connect({ hostname: "127.0.0.1", port });
    await connection.write(
      upgradeRequest(port, [`Sec-WebSocket-Protocol: ${SUBPROTOCOL}, ${bearerProtocol(token)}`]),
    );
    let bytes: Uint8Array = new Uint8Array(0);
    const buffer = new Uint8Array(16 * 1024);
    const deadline = Date.now() + 5_000;
    for (;;) {
      const end = indexOfHeadEnd(bytes);
      if (end >= 0) {
        const head = new TextDecoder().decode(bytes.subarray(0, end));
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
        return new RawClient(connection, status, bytes.subarray(end + 4));
      }
      if (Date.now() > deadline) break;
      const n = await connection.read(buffer);
      if (n === null) break;
      bytes = concat(bytes, buffer.subarray(0, n));
    }
    connection.close();
    throw new Error("No response to the upgrade request");
  }

  /** Whether the relay has ended the TCP connection. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Sends one masked text frame (a zero mask). */
  async sendText(text: string): Promise<void> {
    const payload = new TextEncoder().encode(text);
    if (payload.length > 125) throw new RangeError("A short frame only");
    await this.#connection.write(
      concat(new Uint8Array([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload),
    );
  }

  /**
   * Sends text frames of `bytes` each, as fast as the connection takes them,
   * until the relay's close frame arrives, the connection ends, or `ms` pass.
   *
   * @returns How many bytes it sent.
   */
  async flood(bytes: number, ms: number): Promise<number> {
    const head = new Uint8Array(14);
    head[0] = 0x81;
    head[1] = 0x80 | 127;
    new DataView(head.buffer).setBigUint64(2, BigInt(bytes));
    const frame = concat(head, new Uint8Array(bytes).fill(0x20));
    const deadline = Date.now() + ms;
    let sent = 0;
    try {
      while (!this.#ended && Date.now() < deadline) {
        if (this.frames.some((item) => item.opcode === OPCODE.close)) break;
        await this.#connection.write(frame);
        sent += frame.length;
      }
    } catch {
      // The relay ended the connection.
    }
    return sent;
  }

  /** Waits until a frame with this opcode has come, for at most `ms`. */
  async next(opcode: number, ms = 5_000): Promise<RawFrame> {
    const deadline = Date.now() + ms;
    for (;;) {
      const frame = this.frames.find((item) => item.opcode === opcode);
      if (frame !== undefined) return frame;
      if (Date.now() > deadline || this.#ended) {
        throw new Error(`No frame with opcode ${opcode} within ${ms} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Ends the TCP connection (without a close frame) and waits for the reader. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      try {
        this.#connection.close();
      } catch { /* closed */ }
    }
    await this.#reading;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #read(rest: Uint8Array): Promise<void> {
    let bytes = rest;
    const buffer = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        bytes = this.#parse(bytes);
        const n = await this.#connection.read(buffer);
        if (n === null) break;
        bytes = concat(bytes, buffer.subarray(0, n));
      }
    } catch {
      // Closed by us, or reset by the relay.
    }
    this.#ended = true;
  }

  /** Takes the complete (unmasked) frames off the front of `bytes`; returns the rest. */
  #parse(bytes: Uint8Array): Uint8Array {
    for (;;) {
      if (bytes.length < 2) return bytes;
      let length = bytes[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (bytes.length < 4) return bytes;
        length = (bytes[2]! << 8) | bytes[3]!;
        offset = 4;
      } else if (length === 127) {
        if (bytes.length < 10) return bytes;
        length = Number(new DataView(bytes.buffer, bytes.byteOffset + 2, 8).getBigUint64(0));
        offset = 10;
      }
      if (bytes.length < offset + length) return bytes;
      this.frames.push({
        opcode: bytes[0]! & 0x0f,
        payload: bytes.slice(offset, offset + length),
        at: Date.now(),
      });
      bytes = bytes.subarray(offset + length);
    }
  }
}

function indexOfHeadEnd(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
