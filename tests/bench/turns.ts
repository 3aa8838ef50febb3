/**
 * Turn-latency workloads (Deno side):
 *
 * - {@linkcode realTurns}: the real CLI against the fake Messages API. One
 *   `DuplexSession` and one bare Deno pipe, each on its own long-lived
 *   process, take turns alternately; between rounds one fresh `claude -p`
 *   process answers one prompt (spawn to exit). Workloads 1 and 2 (real CLI).
 * - {@linkcode instantTurns}: the same session-against-bare-pipe comparison
 *   against the instant fake CLI, in alternating blocks of turns, so that
 *   only the library's own cost differs. Workload 2 (instant).
 * - {@linkcode oursOnlyTurns}: session turns only, for the rounds
 *   interleaved with the official SDK's child process.
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { BarePipe, userLine } from "./_bare_pipe.ts";
import { within } from "./_measure.ts";

/** The flags of a duplex CLI process, as `subprocess()` passes them. */
export const DUPLEX_ARGS: readonly string[] = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
  "--permission-prompt-tool=stdio",
];

/** Where and how to run a CLI. */
export interface CliTarget {
  /** The program (the real CLI, or the fake CLI's wrapper script). */
  readonly binary: string;
  /** Variables set for it, over the host's environment (or instead of it, with `clearEnv`). */
  readonly env?: Record<string, string>;
  /** Pass only `env`, nothing of the host's environment. */
  readonly clearEnv?: boolean;
  /** Its working directory. */
  readonly cwd?: string;
  /** Reach it through a relay instead of spawning it (workload 7): the relay runs `binary`. */
  readonly relay?: { readonly url: string; readonly token: string };
}

const TURN_LIMIT_MS = 60_000;

/**
 * Opens a session on the target.
 *
 * @param target The CLI.
 * @param extra More session options.
 * @returns The session.
 */
export function openSession(
  target: CliTarget,
  extra: { maxLineBytes?: number } = {},
): Promise<DuplexSession> {
  const transport = target.relay
    ? remote({ url: target.relay.url, token: target.relay.token })
    : subprocess({
      binary: target.binary,
      ...(target.cwd !== undefined && { cwd: target.cwd }),
      ...(target.env !== undefined && { env: target.env }),
      clearEnv: target.clearEnv === true,
    });
  return DuplexSession.start({ transport, ...extra });
}

/**
 * Opens a bare pipe on the target, with the flags the session would use.
 *
 * @param target The CLI.
 * @returns The pipe.
 */
export function openBare(target: CliTarget): BarePipe {
  return new BarePipe({
    binary: target.binary,
    args: DUPLEX_ARGS,
    ...(target.env !== undefined && { env: target.env }),
    clearEnv: target.clearEnv === true,
    ...(target.cwd !== undefined && { cwd: target.cwd }),
  });
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function sessionTurn(session: DuplexSession, text: string): Promise<void> {
  const turn = await session.send(text, { timeoutMs: TURN_LIMIT_MS });
  if (turn.result.isError) throw new Error(`Cannot run the turn: ${turn.result.text}`);
}

async function bareTurn(pipe: BarePipe, text: string): Promise<void> {
  const result = await within(pipe.turn(userLine(text)), TURN_LIMIT_MS, "a bare-pipe turn");
  if (result.is_error === true) throw new Error(`Cannot run the turn: ${String(result.result)}`);
}

/** One fresh `claude -p` process answering one prompt, spawn to exit. */
async function oneShot(target: CliTarget, text: string): Promise<number> {
  const start = performance.now();
  const output = await new Deno.Command(target.binary, {
    args: ["-p", text, "--output-format", "json"],
    ...(target.env !== undefined && { env: target.env }),
    clearEnv: target.clearEnv === true,
    ...(target.cwd !== undefined && { cwd: target.cwd }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(TURN_LIMIT_MS),
  }).output();
  const elapsed = performance.now() - start;
  const stdout = new TextDecoder().decode(output.stdout).trim();
  let result: { is_error?: unknown; result?: unknown } = {};
  try {
    result = JSON.parse(stdout);
  } catch {
    // reported below
  }
  if (!output.success || result.is_error !== false) {
    throw new Error(
      `Cannot run claude -p: exit ${output.code}, stdout ${stdout.slice(0, 200)}, stderr ${
        new TextDecoder().decode(output.stderr).slice(-300)
      }`,
    );
  }
  return elapsed;
}

/** Parameters of {@linkcode realTurns}. */
export interface RealTurnsParams {
  readonly target: CliTarget;
  /** Rounds: each runs one one-shot process, then `turnsPerRound` turns on each of session and pipe. */
  readonly rounds: number;
  readonly turnsPerRound: number;
}

/**
 * Workload 1 and 2 on the real CLI.
 *
 * @param params The CLI and the sizes.
 * @returns Per-turn times in ms.
 */
export async function realTurns(params: RealTurnsParams): Promise<Record<string, unknown>> {
  const { target, rounds, turnsPerRound } = params;
  const ours: number[] = [];
  const bare: number[] = [];
  const oneShots: number[] = [];
  let session: DuplexSession | undefined;
  const pipe = openBare(target);
  try {
    const coldOurs = await timed(async () => {
      session = await openSession(target);
      await sessionTurn(session, "cold turn");
    });
    const coldBare = await timed(() => bareTurn(pipe, "cold turn"));
    const live = session as unknown as DuplexSession;
    for (let round = 0; round < rounds; round++) {
      oneShots.push(await oneShot(target, `one-shot ${round}`));
      for (let i = 0; i < turnsPerRound; i++) {
        const text = `warm turn ${round}.${i}`;
        // Alternate which side goes first, so neither always follows the other.
        if (i % 2 === 0) {
          ours.push(await timed(() => sessionTurn(live, text)));
          bare.push(await timed(() => bareTurn(pipe, text)));
        } else {
          bare.push(await timed(() => bareTurn(pipe, text)));
          ours.push(await timed(() => sessionTurn(live, text)));
        }
      }
    }
    return { coldOurs, coldBare, ours, bare, oneShots };
  } finally {
    await session?.close();
    await pipe.close();
  }
}

/** Parameters of {@linkcode instantTurns}. */
export interface InstantTurnsParams {
  readonly target: CliTarget;
  /** Turns on each side before measuring. */
  readonly warmup: number;
  /** Measured blocks per side. */
  readonly blocks: number;
  /** Turns per block. */
  readonly blockTurns: number;
  /** Also run a bare pipe (false: the session only). */
  readonly bare: boolean;
}

/**
 * Workload 2 on the instant fake CLI: ms per turn, per block.
 *
 * @param params The fake CLI and the sizes.
 * @returns Mean ms per turn of each block, for each side.
 */
export async function instantTurns(params: InstantTurnsParams): Promise<Record<string, unknown>> {
  const { target, warmup, blocks, blockTurns } = params;
  const ours: number[] = [];
  const bare: number[] = [];
  const session = await openSession(target);
  const pipe = params.bare ? openBare(target) : undefined;
  try {
    const runOurs = async (count: number): Promise<number> => {
      const start = performance.now();
      for (let i = 0; i < count; i++) await sessionTurn(session, "hi");
      return (performance.now() - start) / count;
    };
    const runBare = async (count: number): Promise<number> => {
      const start = performance.now();
      for (let i = 0; i < count; i++) await bareTurn(pipe as BarePipe, "hi");
      return (performance.now() - start) / count;
    };
    await runOurs(warmup);
    if (pipe) await runBare(warmup);
    for (let block = 0; block < blocks; block++) {
      if (block % 2 === 0 || !pipe) {
        ours.push(await runOurs(blockTurns));
        if (pipe) bare.push(await runBare(blockTurns));
      } else {
        bare.push(await runBare(blockTurns));
        ours.push(await runOurs(blockTurns));
      }
    }
    return { ours, bare };
  } finally {
    await session.close();
    await pipe?.close();
  }
}

/** Parameters of {@linkcode oursOnlyTurns}. */
export interface OursOnlyParams {
  readonly target: CliTarget;
  readonly turns: number;
}

/**
 * Session turns on the real CLI, to interleave with the SDK's child: the
 * cold first turn and each warm turn.
 *
 * @param params The CLI and the number of warm turns.
 * @returns The cold time and the warm times, in ms.
 */
export async function oursOnlyTurns(params: OursOnlyParams): Promise<Record<string, unknown>> {
  const warm: number[] = [];
  let session: DuplexSession | undefined;
  try {
    const cold = await timed(async () => {
      session = await openSession(params.target);
      await sessionTurn(session, "cold turn");
    });
    const live = session as unknown as DuplexSession;
    for (let i = 0; i < params.turns; i++) {
      warm.push(await timed(() => sessionTurn(live, `warm turn ${i}`)));
    }
    return { cold, warm };
  } finally {
    await session?.close();
  }
}

/** Parameters of {@linkcode turnLatency}. */
export interface TurnLatencyParams {
  readonly target: CliTarget;
  readonly warmup: number;
  readonly turns: number;
}

/**
 * Workload 7 on the instant fake CLI: the time of each turn (write to
 * `result`), for percentiles; the target may be reached through a relay.
 *
 * @param params The fake CLI (or the relay that runs it) and the sizes.
 * @returns Every measured turn's time, in ms.
 */
export async function turnLatency(params: TurnLatencyParams): Promise<Record<string, unknown>> {
  const session = await openSession(params.target);
  try {
    for (let i = 0; i < params.warmup; i++) await sessionTurn(session, "hi");
    const times: number[] = [];
    for (let i = 0; i < params.turns; i++) {
      times.push(await timed(() => sessionTurn(session, "hi")));
    }
    return { times };
  } finally {
    await session.close();
  }
}
