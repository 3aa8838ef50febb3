// This module is browser compatible.
/*
 * A session's startup: the transport opened, what goes to the CLI before
 * the first turn, and what the turns wait for.
 *
 * - `initialize`, when the options need one, is written before the first
 *   user line without waiting for its reply; `initialized` resolves with the
 *   reply read as a `SessionInfo`. When it fails, the turn running then
 *   fails with its error, or else the next `send` does (once).
 * - A hook that asks for `onFailure: "block"` holds every user line (and
 *   interrupts) until the reply confirms the CLI honours it; when it does
 *   not, the session ends and every send is refused (`PromptHold`).
 * - External MCP servers go over the control channel (`mcp_set_servers`,
 *   after `initialize`), never on argv; the first send waits for them, and
 *   their failure is its error.
 *
 * - The reply stays the session's description (`result`, the public
 *   `initializationResult()`): replaced by a claim's `initialize` payload
 *   (keeping the first reply's `*_applied` confirmations it lacks, as the
 *   SDK does) and by each `reinitialize()`'s reply. A session that sent no
 *   `initialize` at start sends one, with no fields, the first time its
 *   reply is asked for. The latest `system/commands_changed` list wins over
 *   the reply's commands until the next reply.
 *
 * `ready(signal)` is what a send awaits before its line goes out:
 * `undefined` on the usual path (nothing to wait for, no await), else one
 * promise for the hold and the servers. A held send and a held interrupt
 * resume through chains of the same length, so they go out in the order
 * they were made (an interrupt after the lines it is meant to follow).
 */

import { abortable, checkMs, deadline } from "../_deadline.ts";
import { isRecord } from "../_values.ts";
import { DuplexError } from "../errors.ts";
import type { HookEvent } from "../hooks/hooks.ts";
import type { InitializeResponse, SlashCommandInfo } from "../protocol/control_requests.ts";
import type { Transport } from "../transport/transport.ts";
import type { CliCheck } from "./_cli_check.ts";
import type { ControlChannel } from "./_control_channel.ts";
import { PromptHold } from "./_prompt_hold.ts";
import type { SessionTelemetry } from "./_session_telemetry.ts";
import type { TurnTracker } from "./_turn_tracker.ts";
import type { McpServers } from "./mcp_servers.ts";
import { readSessionInfo, type SessionInfo } from "./session_info.ts";
import type { ControlRequestOptions, DuplexSessionOptions } from "./session_options.ts";

/**
 * Opens the session's transport: a factory gets the start's signal and the
 * session span's trace context (for its child process). When it fails, the
 * session span fails and ends.
 *
 * @param options The start options (checked).
 * @param telemetry The session's telemetry.
 * @returns The open transport.
 */
export async function openTransport(
  options: DuplexSessionOptions,
  telemetry: SessionTelemetry,
): Promise<Transport> {
  try {
    const traceContext = telemetry.traceContext();
    return typeof options.transport === "function"
      ? await options.transport({
        signal: options.signal ?? new AbortController().signal,
        ...(traceContext ? { traceContext } : {}),
      })
      : options.transport;
  } catch (error) {
    telemetry.startFailed(error);
    throw error;
  }
}

/** What startup needs from its session. */
export interface StartupHost {
  /** Sends `initialize`. */
  readonly control: ControlChannel;
  /** Fails the running turn with the error of a failed `initialize`. */
  readonly turns: TurnTracker;
  /** Sets the session's MCP servers (`setMcpServers`). */
  setMcpServers(servers: McpServers): Promise<unknown>;
  /** Ends the session: the CLI did not confirm the hooks that ask to block. */
  refuse(refusal: DuplexError): void;
  /** Throws when the session no longer takes turns. */
  assertUsable(what: string): void;
}

/** What the session starts with. */
export interface StartupPlan {
  /** The fields of `initialize`, or undefined when none is sent. */
  readonly initialize: Record<string, unknown> | undefined;
  /** Checks the reply's permission mode against the transport's, when it states one. */
  readonly cli: CliCheck | undefined;
  /** The hook events that ask for `onFailure: "block"`. */
  readonly blocking: readonly HookEvent[];
  /** The whole set of MCP servers, when it holds external ones (else undefined). */
  readonly servers: McpServers | undefined;
}

export class Startup {
  /** Resolves with the CLI's answer to `initialize` (`undefined` when none was sent). */
  readonly initialized: Promise<SessionInfo | undefined>;
  readonly #host: StartupHost;
  readonly #cli: CliCheck | undefined;
  /** Holds user lines until `initialize` confirms the hooks that ask to block (when any do). */
  readonly #hold: PromptHold | undefined;
  #info: SessionInfo | undefined;
  /** The external servers being set: the first send waits for them. */
  #servers: Promise<void> | undefined;
  /** `initialize` failed while no turn ran: the next send's error. */
  #failure: { readonly error: unknown } | undefined;
  /** The reply describing the session (see the header), once one was asked for or sent. */
  #reply: Promise<InitializeResponse> | undefined;
  /** The latest `system/commands_changed` list, newer than the reply's. */
  #commands: SlashCommandInfo[] | undefined;
  /** The fields of every `initialize` this session sends (the first one's). */
  readonly fields: Readonly<Record<string, unknown>>;

  /**
   * Sends what the session starts with (`initialize`, then the external servers).
   *
   * @param host The session's parts.
   * @param plan What to send.
   */
  constructor(host: StartupHost, plan: StartupPlan) {
    this.#host = host;
    this.#cli = plan.cli;
    this.fields = plan.initialize ?? {};
    let reply = plan.initialize === undefined
      ? undefined
      : host.control.request("initialize", plan.initialize);
    const cli = plan.cli;
    if (reply && cli) {
      reply = reply.then((payload) => {
        const refusal = cli.initialized(payload); // the session is ending with it
        if (refusal) throw refusal;
        return payload;
      });
    }
    if (reply && plan.blocking.length > 0) {
      // A hook that must block on failure is unsafe on a CLI that would only warn: user lines
      // wait for the reply to confirm, and when it does not, the session ends (as the SDK does).
      this.#hold = new PromptHold(plan.blocking, reply, (refusal) => host.refuse(refusal));
      reply = this.#hold.confirmed;
    }
    if (reply) {
      const pending = reply.then((payload) => {
        this.#info = readSessionInfo(payload);
        return this.#info;
      });
      pending.catch((error) => {
        if (this.#hold) return; // refused for good, never reported once
        if (!host.turns.failActive(error)) this.#failure = { error };
      });
      this.initialized = pending;
      this.#reply = pending.then((info) => info.raw as InitializeResponse);
      this.#reply.catch(() => {}); // reported through `initialized` and the sends
    } else {
      this.initialized = Promise.resolve(undefined);
    }
    if (plan.servers) {
      this.#servers = host.setMcpServers(plan.servers).then(() => {});
      this.#servers.catch(() => {});
    }
  }

  /** The CLI's answer to `initialize` (or to a claim), once it came. */
  get info(): SessionInfo | undefined {
    return this.#info;
  }

  /** Why every user line is refused, once the CLI did not confirm a hook that asks to block. */
  get refusal(): DuplexError | undefined {
    return this.#hold?.refusal;
  }

  /**
   * A claim answered: its `initialize` payload describes the session now.
   *
   * @throws {DuplexError} `unsupported` when it reports another permission
   *   mode than the session asked for (the session is ending).
   */
  claimed(info: SessionInfo): void {
    const refusal = this.#cli?.initialized(info.raw);
    if (refusal) throw refusal;
    const confirmed = Object.entries(this.#info?.raw ?? {}).filter(([key]) =>
      key.endsWith("_applied")
    );
    this.#info = info;
    this.#replace({ ...Object.fromEntries(confirmed), ...info.raw });
  }

  /**
   * A `reinitialize()` answered: its reply describes the session now.
   *
   * @param reply The reply payload.
   * @returns The session info read from it.
   */
  reinitialized(reply: InitializeResponse): SessionInfo {
    this.#info = readSessionInfo(reply);
    this.#replace(reply);
    return this.#info;
  }

  /**
   * The reply describing the session: the startup's (its failure is this
   * call's), a claim's or the last `reinitialize()`'s; when none was sent,
   * `send` sends one now (a failed one is sent again by the next call).
   *
   * @param send Sends `initialize` with {@linkcode Startup.fields} and the call's options.
   * @param options A signal and a timeout for the wait.
   * @returns The reply payload.
   */
  result(
    send: (options: ControlRequestOptions) => Promise<InitializeResponse>,
    options: ControlRequestOptions,
  ): Promise<InitializeResponse> {
    const reply = this.#reply;
    if (!reply) {
      const sent: Promise<InitializeResponse> = send(options).then((payload) => {
        if (this.#reply === sent) this.#info = readSessionInfo(payload); // not replaced meanwhile
        return payload;
      });
      this.#reply = sent;
      sent.catch(() => {
        if (this.#reply === sent) this.#reply = undefined;
      });
      return sent;
    }
    return bounded(reply, options);
  }

  /** The slash commands: the latest `commands_changed` list, else `undefined` (the reply's). */
  get commands(): SlashCommandInfo[] | undefined {
    return this.#commands;
  }

  /**
   * A `system/commands_changed` frame came: its list replaces the commands.
   *
   * @param commands The frame's `commands`.
   */
  commandsChanged(commands: unknown[]): void {
    this.#commands = commands.filter((c): c is SlashCommandInfo =>
      isRecord(c) && typeof c.name === "string"
    );
  }

  #replace(reply: InitializeResponse): void {
    this.#reply = Promise.resolve(reply);
    this.#commands = undefined; // the reply is newer than any earlier push
  }

  /**
   * What a send waits for before its line goes out.
   *
   * @param signal The send's signal: it withdraws a held line.
   * @returns `undefined` when the line may go now; else a promise that
   *   resolves when it may, and rejects with why it may not.
   * @throws The error of an `initialize` that failed while no turn ran (once).
   */
  ready(signal: AbortSignal | undefined): Promise<void> | undefined {
    const failure = this.#failure;
    if (failure) {
      this.#failure = undefined;
      throw failure.error;
    }
    const held = this.#hold?.wait(signal);
    if (held) return held.then(() => this.#afterHold(signal)); // the refusal, or the signal's reason
    return this.#takeServers();
  }

  /**
   * What an interrupt waits for: the held lines it is meant to follow.
   *
   * @param signal The interrupt's signal.
   * @returns `undefined`, or a promise that resolves once the hold is open.
   */
  held(signal: AbortSignal | undefined): Promise<void> | undefined {
    return this.#hold?.wait(signal)?.then(opened); // one step, as a send's (see the header)
  }

  #afterHold(signal: AbortSignal | undefined): Promise<void> | undefined {
    signal?.throwIfAborted();
    this.#host.assertUsable("send a turn");
    return this.#takeServers();
  }

  /* The external servers, for the first send that gets here (its error is that send's). */
  #takeServers(): Promise<void> | undefined {
    const servers = this.#servers;
    if (!servers) return undefined;
    this.#servers = undefined;
    return servers.then(() => this.#host.assertUsable("send a turn"));
  }
}

function opened(): void {}

/* Waits for `reply` within the call's signal and timeout (the reply itself is bounded too). */
async function bounded<T>(reply: Promise<T>, options: ControlRequestOptions): Promise<T> {
  const { signal, timeoutMs } = options;
  signal?.throwIfAborted();
  if (timeoutMs === undefined) return signal ? await abortable(reply, signal) : await reply;
  const ms = checkMs(timeoutMs, "Cannot wait for the initialize reply: timeoutMs");
  using limit = deadline(ms, {
    signal,
    reason: () =>
      new DuplexError("timeout", `Cannot get the initialize reply: none came within ${ms} ms`, {
        subtype: "initialize",
      }),
  });
  return await abortable(reply, limit.signal);
}
