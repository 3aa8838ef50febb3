// This module is browser compatible.
/*
 * A session's parts, built and wired once (the body of `DuplexSession`'s
 * constructor): the control channel (our requests), the control router (the
 * CLI's), the turn tracker, the transcript mirror, the read pump that feeds
 * the frame router, the end and the startup. Each part gets the others it
 * needs directly; the frame router and the end take this one object.
 */

import { encodeLine } from "../codec/ndjson_encode_stream.ts";
import { Broadcast } from "../subscriptions/_broadcast.ts";
import type { DuplexError } from "../errors.ts";
import type { Transport } from "../transport/transport.ts";
import { CliCheck, featuresUsed } from "./_cli_check.ts";
import { ControlChannel } from "./_control_channel.ts";
import { ControlRouter } from "./_control_router.ts";
import { type FrameParts, routeFrame } from "./_frame_router.ts";
import {
  readSetServersResult,
  setServersField,
  splitServers,
  startupServers,
} from "./_mcp_servers.ts";
import { TranscriptMirror } from "./_mirror.ts";
import { ReadPump } from "./_read_pump.ts";
import { type EndParts, SessionEnd } from "./_session_end.ts";
import { initializeFields, type SessionSettings } from "./_session_input.ts";
import type { SessionTelemetry } from "./_session_telemetry.ts";
import { Startup } from "./_startup.ts";
import { TurnTracker } from "./_turn_tracker.ts";
import type { SessionEvent } from "./events.ts";
import type { McpServers, McpSetServersResult } from "./mcp_servers.ts";
import type { ControlRequestOptions, DuplexSessionOptions } from "./session_options.ts";

/** Every part of a session. */
export interface SessionParts extends FrameParts, EndParts {
  readonly settings: SessionSettings;
  readonly end: SessionEnd;
  readonly startup: Startup;
  /** Writes a frame to the CLI (a frame that cannot be encoded rejects). */
  write(frame: Record<string, unknown>): Promise<void>;
}

/**
 * Builds a session's parts over an open transport, and starts them: the
 * pump reads, startup sends `initialize` and the external servers.
 *
 * @param transport The open transport.
 * @param options The start options.
 * @param settings The options, checked.
 * @param telemetry The session's telemetry (its span started).
 * @param identified Takes the session id of each `system/init`.
 * @returns The parts.
 */
export function wireSession(
  transport: Transport,
  options: DuplexSessionOptions,
  settings: SessionSettings,
  telemetry: SessionTelemetry,
  identified: (sessionId: string) => void,
): SessionParts {
  const broadcast = new Broadcast<SessionEvent>(laggedEvent, () => telemetry.lagged());
  const write = (frame: Record<string, unknown>): Promise<void> => writeFrame(transport, frame);
  const publish = (event: SessionEvent): void => {
    broadcast.publish(event);
    turns.record(event);
    if (event.type === "stderr") telemetry.stderrLine();
  };
  telemetry.transportOpened(transport.info);
  const control = new ControlChannel(write, settings.controlTimeoutMs, telemetry);
  const requests = new ControlRouter(options, {
    write,
    publish,
    hooks: settings.hooks,
    telemetry,
  });
  const turns: TurnTracker = new TurnTracker({
    telemetry,
    interrupt: (timeoutMs) => control.request("interrupt", {}, { timeoutMs }),
    cancelQueued: async (uuid) => {
      if (cli?.lacks("cancelQueued")) return false; // interrupted when it starts instead
      return (await control.request("cancel_async_message", { message_uuid: uuid })).cancelled ===
        true;
    },
    publish,
    event: publish,
    alive: () => end.lifecycle.phase === "ready",
    close: () => void end.close(),
  }, { graceMs: settings.interruptGraceMs, onUnresponsive: settings.onUnresponsive });
  telemetry.follow(turns);
  const mirror = transport.info.mirror && new TranscriptMirror(transport.info.mirror, publish);
  // A CLI in another permission mode than asked for: no turn of it may finish, nor run a tool.
  const cli = CliCheck.of(transport.info, featuresUsed(settings), {
    refuse: (refusal: DuplexError) => {
      turns.failAll(refusal);
      const interrupt = { timeoutMs: settings.interruptGraceMs };
      control.request("interrupt", { cancel_queued: true }, interrupt).catch(() => {});
      void end.fail(refusal);
    },
    publish,
  });
  const frames: FrameParts = {
    requests,
    control,
    turns,
    mirror,
    telemetry,
    cli,
    identified,
    commandsChanged: (commands) => startup.commandsChanged(commands), // frames come after wiring
    publish,
    ...(transport.answered ? { answered: (uuid: string) => transport.answered!(uuid) } : {}),
  };
  const pump = new ReadPump({
    transport,
    broadcast,
    maxLineBytes: settings.maxLineBytes,
    onFrame: (frame) => routeFrame(frame, frames),
    publish,
    onFailure: (error) => end.readFailed(error),
  });
  const ending = { ...frames, transport, pump, broadcast };
  const end: SessionEnd = new SessionEnd(ending, settings.closeTimeoutMs, options.signal);
  requests.mcpServers = settings.mcp.inProcess;
  const startup = new Startup({
    control,
    turns,
    setMcpServers: (servers) => setServers({ end, control, requests, publish }, servers),
    refuse: (refusal) => void end.fail(refusal),
    assertUsable: (what) => end.assertUsable(what),
  }, {
    initialize: initializeFields(options, settings, transport.info.initialize),
    cli,
    blocking: settings.hooks.blocking,
    servers: startupServers(settings.mcp),
  });
  return { ...ending, settings, end, startup, write };
}

/**
 * Sends a control request of ours, once the session takes work.
 *
 * @returns The CLI's reply payload; rejects (never throws) with why not.
 */
export function sendRequest(
  parts: Pick<SessionParts, "end" | "control"> & { readonly cli?: CliCheck | undefined },
  subtype: string,
  fields: Record<string, unknown>,
  options: ControlRequestOptions,
): Promise<Record<string, unknown>> {
  try {
    options.signal?.throwIfAborted();
    parts.end.assertUsable(`send ${subtype}`);
  } catch (error) {
    return Promise.reject(error);
  }
  if (parts.cli) {
    try {
      parts.cli.require(subtype); // a feature the CLI's version lacks fails here, named
    } catch (error) {
      return Promise.reject(error);
    }
    // A mode the host sets before the first turn is one the CLI may then report.
    if (subtype === "set_permission_mode") parts.cli.asked(fields.mode);
    else if (subtype === "claim_session") parts.cli.asked(fields.permission_mode);
  }
  return parts.control.request(subtype, fields, options);
}

/**
 * Replaces the session's MCP servers (`setMcpServers`): in-process ones are
 * answered here from then on, and each server that did not connect is a
 * `mcp_server_failed` diagnostic.
 */
export async function setServers(
  parts: Pick<SessionParts, "end" | "control" | "requests" | "publish">,
  servers: McpServers,
  options: ControlRequestOptions = {},
): Promise<McpSetServersResult> {
  const split = splitServers(servers);
  const fields = { servers: setServersField(split) };
  const reply = await sendRequest(parts, "mcp_set_servers", fields, options);
  parts.requests.mcpServers = split.inProcess;
  const result = readSetServersResult(reply);
  for (const [name, message] of Object.entries(result.errors)) {
    parts.publish({
      type: "diagnostic",
      kind: "mcp_server_failed",
      message: `The MCP server ${name} did not connect: ${message}`,
    });
  }
  return result;
}

function writeFrame(transport: Transport, frame: Record<string, unknown>): Promise<void> {
  let line: string;
  try {
    line = encodeLine(frame);
  } catch (error) {
    return Promise.reject(error); // a BigInt, a cycle…: a rejection the caller settles, never a throw
  }
  return transport.write(line);
}

function laggedEvent(count: number): SessionEvent {
  return { type: "lagged", count };
}
