// This module is browser compatible.
/**
 * One run of the scripted CLI's fake process: its transport, and the replies
 * it schedules for the lines the session writes. Private to
 * `@duplex/claude/testing`.
 *
 * @module
 */

import { sleep } from "../_deadline.ts";
import type { TransportExit, TransportInfo } from "../transport/transport.ts";
import { echoReply, type EchoState } from "./_echo.ts";
import { MemoryTransport } from "./_memory_transport.ts";
import type { ScriptedCli } from "./scripted_cli.ts";
import type { ScriptedCliOptions, ScriptRule } from "./scripted_cli_options.ts";

/** What a {@linkcode ScriptedProcess} asks of the CLI that spawned it. */
export interface ProcessHost {
  /** The CLI, handed to the rules' replies. */
  readonly cli: ScriptedCli;
  /** Parses and records a line the session wrote: the frame, or undefined when it is not an object. */
  read(line: string): Record<string, unknown> | undefined;
  /** The first rule that matches a frame (taken out when `once`), or undefined. */
  ruleFor(frame: Record<string, unknown>): ScriptRule | undefined;
  /** Records an error a rule threw. */
  report(error: unknown): void;
  /** Counts a `close()` call. */
  closeCalled(): void;
}

/**
 * A fake process. Each line the session writes is answered on a later
 * macrotask, as a real process would, by the host's rules or the echo
 * behaviour; replies not started when the process ends are dropped.
 */
export class ScriptedProcess {
  /** The transport the session drives. */
  readonly transport: MemoryTransport;
  /** True once the session opened this process. */
  opened = false;
  /** True once the test called `hang()`: nothing is answered any more. */
  hung = false;
  #options: ScriptedCliOptions;
  #host: ProcessHost;
  #echo: EchoState;
  /** Aborted when the process ends: replies not yet started are dropped. */
  #life = new AbortController();
  #pending = new Set<Promise<void>>();

  /**
   * Makes a process; it runs once the transport is handed to the session.
   *
   * @param options The CLI's options (chunking, pid, echo, exitOnEndInput).
   * @param host The CLI that spawns it.
   */
  constructor(options: ScriptedCliOptions, host: ProcessHost) {
    this.#options = options;
    this.#host = host;
    this.#echo = { sessionId: host.cli.sessionId, turns: 0 };
    const info: TransportInfo = {
      kind: "scripted",
      description: "ScriptedCli",
      ...(options.pid === undefined ? {} : { pid: options.pid }),
    };
    this.transport = new MemoryTransport(
      { info, chunking: options.chunking },
      {
        onWrite: (line) => this.#onWrite(line),
        onEndInput: () => void this.#onEndInput(),
        onClose: (): Omit<TransportExit, "stderrTail" | "requested"> =>
          this.hung ? { code: null, signal: "SIGTERM" } : { code: 0, signal: null },
        onCloseCalled: () => host.closeCalled(),
        onFinish: () => this.#life.abort(),
      },
    );
  }

  /**
   * Writes frames to the session, each as `JSON.stringify(frame) + "\n"`, in one push.
   *
   * @param frames The frames, in order.
   */
  emit(frames: unknown[]): void {
    if (frames.length === 0) return;
    this.transport.push(frames.map((frame) => `${JSON.stringify(frame)}\n`).join(""));
  }

  #onWrite(line: string): void {
    const frame = this.#host.read(line);
    if (frame === undefined || this.hung) return;
    // Answered on a later macrotask, as a real process would; dropped if the process ends first.
    const answered = sleep(0, { signal: this.#life.signal }).then(
      () => this.#answer(frame),
      () => {},
    );
    this.#pending.add(answered);
    answered.then(() => this.#pending.delete(answered));
  }

  async #answer(frame: Record<string, unknown>): Promise<void> {
    if (this.hung || this.transport.ended) return;
    const rule = this.#host.ruleFor(frame);
    if (rule === undefined) {
      if (this.#options.echo) this.emit(echoReply(this.#echo, frame));
      return;
    }
    try {
      const frames = await rule.reply(frame, this.#host.cli);
      if (frames === undefined || frames === null) return;
      if (typeof frames === "string" || typeof frames[Symbol.iterator] !== "function") {
        throw new TypeError(
          "Cannot emit a rule's reply: it must return frames (an iterable) or nothing",
        );
      }
      if (!this.hung) this.emit([...frames]);
    } catch (error) {
      this.#host.report(error);
    }
  }

  async #onEndInput(): Promise<void> {
    if (this.hung || !(this.#options.exitOnEndInput ?? this.#options.echo ?? false)) return;
    while (this.#pending.size > 0 && !this.transport.ended) {
      await Promise.race([Promise.allSettled([...this.#pending]), this.transport.closed]);
    }
    if (!this.hung) this.transport.finish({ code: 0, signal: null, requested: false });
  }
}
