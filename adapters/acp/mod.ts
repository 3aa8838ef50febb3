/**
 * Claude Code as an [Agent Client Protocol](https://agentclientprotocol.com)
 * agent: the program an editor (Zed, JetBrains, Neovim plugins, …) launches
 * and talks to over stdio, built on `@agentclientprotocol/sdk`'s agent side
 * (stable ACP v1) and this library's `SessionPool`.
 *
 * - `deno run -A jsr:@duplex/claude/acp` (in the repository: `deno task acp`)
 *   is the program (this module run as the main one runs `main.ts`); its
 *   flags choose the CLI, a relay (`--relay=wss://… --token=…`), limits and
 *   telemetry (see `main.ts`).
 * - {@linkcode serveAcp} serves one client on two byte streams;
 *   {@linkcode AcpAgent} is the agent itself, for any stream of JSON-RPC
 *   messages.
 *
 * What a client gets: `initialize` with capabilities (images, embedded
 * context, HTTP and SSE MCP servers, `session/load`, `session/list`,
 * `session/resume`, `session/close`); `session/new` (the client's MCP
 * servers become the CLI's external servers); `session/load` and
 * `session/resume` of an earlier conversation, from the CLI's history or a
 * `SessionStore` (`load` replays it as updates); `session/prompt` with text,
 * images, resource links and embedded resources; streamed updates (agent
 * message and thought chunks, tool calls with their kind, locations and
 * diffs, their results, plans from `TodoWrite`, usage); permission requests
 * as `session/request_permission` (allow once, always, reject; a client may
 * rewrite the input with `_meta.updatedInput`); `session/cancel` as an
 * interrupt; the permission modes as session modes and the `mode` and
 * `model` config options; the CLI's slash commands as available commands.
 * Each session is a conversation of a pool: at `maxLive` live CLIs the
 * least recently used idle one is hibernated and resumed at its next prompt.
 *
 * @example A client prompts a session (a scripted CLI stands in for `claude`)
 * ```ts
 * import { AcpAgent } from "@duplex/claude/acp";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
 * import assert from "node:assert/strict";
 *
 * // Two pipes: what the client writes, what the agent writes.
 * const toAgent = new TransformStream<Uint8Array, Uint8Array>();
 * const toClient = new TransformStream<Uint8Array, Uint8Array>();
 * await using acp = new AcpAgent({ launch: () => new ScriptedCli({ echo: true }).transport });
 * acp.connect({ readable: toAgent.readable, writable: toClient.writable });
 *
 * const chunks: string[] = [];
 * const editor = client().onNotification(methods.client.session.update, ({ params }) => {
 *   const update = params.update;
 *   if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
 *     chunks.push(update.content.text);
 *   }
 * }).connect(ndJsonStream(toAgent.writable, toClient.readable));
 *
 * await editor.agent.request(methods.agent.initialize, { protocolVersion: 1 });
 * const { sessionId } = await editor.agent.request(methods.agent.session.new, {
 *   cwd: "/tmp",
 *   mcpServers: [],
 * });
 * const { stopReason } = await editor.agent.request(methods.agent.session.prompt, {
 *   sessionId,
 *   prompt: [{ type: "text", text: "Hi" }],
 * });
 * assert.equal(stopReason, "end_turn");
 * assert.deepEqual(chunks, ["Echo: Hi"]);
 * editor.close();
 * ```
 *
 * @module
 */

export { AcpAgent, type AcpByteStreams, type AcpConnection } from "./acp_agent.ts";
export type { AcpAgentInfo, AcpAgentOptions, AcpRelayOptions } from "./acp_options.ts";
export { serveAcp, type ServeAcpOptions, type ServedAcp } from "./serve_acp.ts";

// `deno run -A jsr:@duplex/claude/acp` runs the program.
if (import.meta.main) await import("./main.ts");
