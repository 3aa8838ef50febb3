/**
 * What a store receives per turn through a relay, for the capacity model:
 * a relay in this process over the real CLI (offline, against the fake
 * Messages API) with a store in memory that counts each `append` (the
 * relay's session record, written after each input line, and the
 * transcript mirror's batches), its entries and their JSON bytes, over
 * warm turns after a first one. Records and transcripts apart: a record
 * entry is small, a transcript's is the CLI's line.
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { RELAY_SESSIONS_PROJECT_KEY } from "../../adapters/relay/relay_options.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import type { SessionKey, SessionStoreEntry } from "../../src/store/session_store.ts";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import { echoTurn, sleep } from "./_pool_bench.ts";
import { type Figure, figure, progress } from "./_capacity_proc.ts";

/** Parameters of {@linkcode measureMirror}. */
export interface MirrorParams {
  /** Conversations (one figure sample each). */
  readonly samples: number;
  /** Warm turns per conversation. */
  readonly turns: number;
}

interface Tally {
  appends: number;
  entries: number;
  bytes: number;
}

/* A store in memory that counts what it is given, records and transcripts apart. */
class CountingStore extends InMemorySessionStore {
  readonly records: Tally = { appends: 0, entries: 0, bytes: 0 };
  readonly transcripts: Tally = { appends: 0, entries: 0, bytes: 0 };

  override append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    const tally = key.projectKey.startsWith(RELAY_SESSIONS_PROJECT_KEY)
      ? this.records
      : this.transcripts;
    tally.appends++;
    tally.entries += entries.length;
    tally.bytes += entries.reduce((sum, entry) => sum + JSON.stringify(entry).length + 1, 0);
    return super.append(key, entries);
  }
}

function snapshot(tally: Tally): Tally {
  return { ...tally };
}

/**
 * Measures what a store receives per turn.
 *
 * @param params The sizes.
 * @returns The figures, or why the CLI is unavailable.
 */
export async function measureMirror(params: MirrorParams): Promise<Figure[] | string> {
  const cli = cliPath();
  if (!cli.available) return `the real claude CLI is unavailable (${cli.reason})`;
  const root = await Deno.makeTempDir({ prefix: "duplex-capacity-mirror-" });
  const token = crypto.randomUUID();
  const per = { appends: [] as number[], rows: [] as number[], bytes: [] as number[] };
  const records = { appends: [] as number[], bytes: [] as number[] };
  try {
    await using api = await startFakeApi();
    for (let i = 0; i < params.samples; i++) {
      const store = new CountingStore();
      await Deno.mkdir(`${root}/home-${i}`);
      await Deno.mkdir(`${root}/work-${i}`);
      await using relay = serveRelay({
        tokens: [token],
        workspace: `${root}/work-${i}`,
        tenancy: "shared",
        sessionStore: store,
        projectKey: "capacity",
        cli: {
          binary: cli.path,
          env: sandboxEnv(api, `${root}/home-${i}`),
          clearEnv: true,
          hostSignal: "ignore",
        },
      });
      await using session = await DuplexSession.start({
        transport: remote({ url: relay.url, token }),
      });
      await echoTurn(session, `first turn of conversation ${i}`);
      await sleep(500);
      const [r0, t0] = [snapshot(store.records), snapshot(store.transcripts)];
      for (let n = 0; n < params.turns; n++) await echoTurn(session, `turn ${n} of ${i}`);
      await sleep(500);
      const [r1, t1] = [store.records, store.transcripts];
      const turns = params.turns;
      per.appends.push((r1.appends - r0.appends + t1.appends - t0.appends) / turns);
      per.rows.push((r1.entries - r0.entries + t1.entries - t0.entries) / turns);
      per.bytes.push((r1.bytes - r0.bytes + t1.bytes - t0.bytes) / turns);
      records.appends.push((r1.appends - r0.appends) / turns);
      records.bytes.push((r1.bytes - r0.bytes) / Math.max(1, r1.entries - r0.entries));
      await session.close();
      progress(`mirror ${i + 1}/${params.samples}: ${per.appends.at(-1)} appends per turn`);
    }
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
  return [
    figure(
      "storeAppendsPerTurn",
      "through a relay: store appends per turn",
      "appends",
      per.appends,
    ),
    figure("recordAppendsPerTurn", "of which the relay's record", "appends", records.appends),
    figure("storeRowsPerTurn", "through a relay: entries (rows) stored per turn", "rows", per.rows),
    figure("storeTurnBytes", "through a relay: JSON bytes stored per turn", "B", per.bytes),
    figure("recordEntryBytes", "a relay record entry's JSON bytes", "B", records.bytes),
  ];
}
