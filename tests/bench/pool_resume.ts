/**
 * Resume after hibernation vs a cold start (Deno side), workload 8h-8i, on
 * the real CLI against the fake Messages API. One `SessionPool` (no spares,
 * `idleMs` short): each transcript is built by running its turns on the
 * CLI, then hibernated; each round (the order rotating) times, from
 * `acquire` to the first result, a new conversation (a cold start) and the
 * first turn of each hibernated one (a resume: `--resume`, same session id),
 * and waits for each to be hibernated again before the next.
 *
 * @module
 */

import { type PoolEvent, SessionPool } from "../../adapters/subprocess/pool/mod.ts";
import {
  echoTurn,
  loadAverage,
  processOf,
  reapedChildrenCpuMs,
  timed,
  until,
} from "./_pool_bench.ts";
import type { CliTarget } from "./turns.ts";

/** Parameters of {@linkcode poolResume}. */
export interface PoolResumeParams {
  readonly target: CliTarget;
  /** The transcripts' lengths, in turns. */
  readonly transcripts: readonly number[];
  /** Rounds (the runner drops the first). */
  readonly samples: number;
  /** The pool's `idleMs`: how soon a released conversation is hibernated. */
  readonly idleMs: number;
}

/**
 * First turns after hibernation and cold first turns.
 *
 * @param params The CLI and the sizes.
 * @returns `cold` and, per transcript length, `resumed` times in ms (acquire
 *   to result); the turns alone (`turnMs`) and the starts (`startMs`); the
 *   prompts of the resumed turns (the runner finds their API requests).
 */
export async function poolResume(params: PoolResumeParams): Promise<Record<string, unknown>> {
  const load = loadAverage();
  const started: { key: string; via: string; ms: number }[] = [];
  const pool = new SessionPool({
    process: processOf(params.target),
    maxLive: 4,
    idleMs: params.idleMs,
    onEvent: (event: PoolEvent) => {
      if (event.type === "started") {
        started.push({ key: event.key, via: event.via, ms: event.ms });
      }
    },
  });
  const hibernated = (key: string) =>
    until(
      `${key} hibernated`,
      () => pool.peek(key)?.state === "hibernated" && pool.health.closing === 0,
    );
  const cold: number[] = [];
  const resumed: Record<string, number[]> = {};
  const prompts: Record<string, string[]> = {};
  const ids = new Map<number, string>();
  /** The turn alone (send to result), the start excluded. */
  const turnMs: { side: string; ms: number }[] = [];
  /** The CLI's CPU time for each measurement (start, turn, close), by side. */
  const cpuMs: Record<string, number[]> = {};
  try {
    const buildMs: Record<string, number> = {};
    for (const turns of params.transcripts) {
      const key = `transcript-${turns}`;
      buildMs[turns] = await timed(() =>
        pool.withSession(key, async (session) => {
          for (let i = 0; i < turns; i++) await echoTurn(session, `${key} turn ${i}`);
          ids.set(turns, session.sessionId as string);
        })
      );
      await hibernated(key);
      resumed[turns] = [];
      prompts[turns] = [];
    }
    const sides = ["cold", ...params.transcripts.map(String)];
    for (let round = 0; round < params.samples; round++) {
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(i + round) % sides.length] as string;
        const key = side === "cold" ? `cold-${round}` : `transcript-${side}`;
        const text = side === "cold" ? `cold ${round}` : `resume ${side} ${round}`;
        const cpuBefore = reapedChildrenCpuMs();
        const ms = await timed(() =>
          pool.withSession(key, async (session) => {
            turnMs.push({ side, ms: await timed(() => echoTurn(session, text)) });
            const id = ids.get(Number(side));
            if (side !== "cold" && session.sessionId !== id) {
              throw new Error(`Cannot trust the resume: session ${session.sessionId}, not ${id}`);
            }
          })
        );
        if (side === "cold") cold.push(ms);
        else {
          resumed[side]?.push(ms);
          prompts[side]?.push(text);
        }
        await hibernated(key);
        (cpuMs[side] ??= []).push(reapedChildrenCpuMs() - cpuBefore);
      }
    }
    // Each transcript's first start is cold (its build), every later one a resume.
    const seen = new Set<string>();
    const wrong = started.filter(({ key, via }) => {
      const first = !seen.has(key);
      seen.add(key);
      return via !== (first ? "cold" : "resumed");
    });
    if (wrong.length > 0) {
      const vias = started.map(({ key, via }) => `${key}:${via}`);
      throw new Error(`Cannot trust the run: the conversations started ${vias.join(", ")}`);
    }
    return {
      loadAverage: load,
      cold,
      resumed,
      prompts,
      buildMs,
      turnMs,
      cpuMs,
      transcriptBytes: Object.fromEntries(
        [...ids].map(([turns, id]) => [turns, transcriptBytes(params.target, id)]),
      ),
      startMs: started.map(({ via, ms }) => ({ via, ms })),
    };
  } finally {
    await pool.close();
  }
}

/** The size of a session's transcript file (`<HOME>/.claude/projects/<folder>/<id>.jsonl`). */
function transcriptBytes(target: CliTarget, sessionId: string): number | undefined {
  const projects = `${target.env?.HOME ?? Deno.env.get("HOME")}/.claude/projects`;
  for (const folder of Deno.readDirSync(projects)) {
    try {
      return Deno.statSync(`${projects}/${folder.name}/${sessionId}.jsonl`).size;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
