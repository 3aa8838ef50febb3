// This module is browser compatible.
/**
 * The conformance peer protocol (see `runTransportConformance`) spoken by a
 * {@linkcode ScriptedCli}: {@linkcode conformanceRules} and
 * {@linkcode conformanceCli}.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import { ScriptedCli, type ScriptedCliOptions, type ScriptRule } from "./scripted_cli.ts";

/** Options of {@linkcode conformanceCli}: those of a {@linkcode ScriptedCli} but its behaviour. */
export type ConformanceCliOptions = Omit<ScriptedCliOptions, "rules" | "echo" | "exitOnEndInput">;

/**
 * Rules that make a {@linkcode ScriptedCli} a conformance peer: for lines
 * `{"type":"conformance","op":…}`, `echo` emits the line back (re-serialised
 * from the parsed frame: rules do not see the raw text), `emit` writes `data`
 * as is with `emitRaw`, `stderr` writes `line` with `emitStderr`, `exit` ends
 * the process with `code`. Other ops are ignored. The CLI must also have
 * `exitOnEndInput: true` (the protocol's exit on EOF); {@linkcode conformanceCli}
 * sets it.
 *
 * @returns The rules, for `new ScriptedCli({ rules, exitOnEndInput: true })`.
 *
 * @example Echo a line
 * ```ts
 * import { conformanceRules, ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const cli = new ScriptedCli({ rules: conformanceRules(), exitOnEndInput: true });
 * const transport = await cli.transport({ signal: new AbortController().signal });
 * await transport.write('{"type":"conformance","op":"echo","n":1}');
 * const reader = transport.readable.getReader();
 * const line = new TextDecoder().decode((await reader.read()).value);
 * assert.deepEqual(JSON.parse(line), {
 *   type: "conformance",
 *   op: "echo",
 *   n: 1,
 * });
 * reader.releaseLock();
 * await transport.close();
 * ```
 */
export function conformanceRules(): ScriptRule[] {
  return [{
    match: isConformanceOp,
    reply(frame, cli): Iterable<unknown> | void {
      switch (frame.op) {
        case "echo":
          return [frame];
        case "emit":
          if (typeof frame.data === "string") cli.emitRaw(frame.data);
          return;
        case "stderr":
          if (typeof frame.line === "string") cli.emitStderr(frame.line);
          return;
        case "exit": {
          const code = frame.code;
          cli.exit({ code: Number.isInteger(code) ? code as number : 0 });
          return;
        }
      }
    },
  }];
}

/**
 * Makes a {@linkcode ScriptedCli} that speaks the conformance peer protocol,
 * for `runTransportConformance`. Make one per peer: each opens one process.
 *
 * @param options Chunking and reported info (not rules or echo).
 * @returns The fake CLI; open it with `cli.transport(context)`.
 *
 * @example Open a conformance peer
 * ```ts
 * import { conformanceCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const transport = await conformanceCli({ chunking: { maxChunk: 7 } })
 *   .transport({ signal: new AbortController().signal });
 * await transport.write('{"type":"conformance","op":"exit","code":3}');
 * assert.equal((await transport.closed).code, 3);
 * ```
 */
export function conformanceCli(options: ConformanceCliOptions = {}): ScriptedCli {
  return new ScriptedCli({
    ...options,
    rules: conformanceRules(),
    exitOnEndInput: true,
  });
}

function isConformanceOp(frame: Record<string, unknown>): boolean {
  return isRecord(frame) && frame.type === "conformance";
}
