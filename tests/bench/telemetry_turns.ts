/**
 * Workload 2e: the per-turn cost of telemetry, with the instant fake CLI.
 * Three sessions in one process, their blocks interleaved: telemetry off,
 * the OpenTelemetry API with no SDK registered (its tracer is a no-op), and
 * the real SDK recording every span in memory.
 *
 * @module
 */

import * as otel from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { DuplexSession, type TelemetryOptions } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import type { CliTarget } from "./turns.ts";

/** Parameters of {@linkcode telemetryTurns}. */
export interface TelemetryTurnsParams {
  readonly target: CliTarget;
  readonly warmup: number;
  readonly blocks: number;
  readonly blockTurns: number;
}

const MODES = ["off", "noop", "memory"] as const;

/**
 * Runs the three sessions side by side.
 *
 * @param params The fake CLI and the sizes.
 * @returns Milliseconds per turn of each block, by mode.
 */
export async function telemetryTurns(
  params: TelemetryTurnsParams,
): Promise<Record<string, unknown>> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const options: Record<(typeof MODES)[number], TelemetryOptions | undefined> = {
    off: undefined,
    noop: { api: otel }, // no provider registered: the API's tracer records nothing
    memory: { api: otel, tracer: provider.getTracer("bench") },
  };
  const { target } = params;
  const sessions = await Promise.all(MODES.map((mode) => {
    const telemetry = options[mode];
    return DuplexSession.start({
      transport: subprocess({
        binary: target.binary,
        ...(target.env !== undefined && { env: target.env }),
        clearEnv: target.clearEnv === true,
      }),
      ...(telemetry ? { telemetry } : {}),
    });
  }));
  const times: Record<string, number[]> = { off: [], noop: [], memory: [] };
  const run = async (index: number, count: number): Promise<number> => {
    const session = sessions[index] as DuplexSession;
    const start = performance.now();
    for (let i = 0; i < count; i++) await session.send("hi", { timeoutMs: 30_000 });
    exporter.reset();
    return (performance.now() - start) / count;
  };
  try {
    for (let i = 0; i < MODES.length; i++) await run(i, params.warmup);
    for (let block = 0; block < params.blocks; block++) {
      for (let k = 0; k < MODES.length; k++) {
        const index = (block + k) % MODES.length; // rotate who goes first
        times[MODES[index] as string]?.push(await run(index, params.blockTurns));
      }
    }
    return times;
  } finally {
    await Promise.all(sessions.map((session) => session.close()));
    await provider.shutdown();
  }
}
