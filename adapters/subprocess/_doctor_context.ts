/* What the doctor's checks share: its options, settled once (`doctor.ts` makes it). */

import type { DoctorOptions } from "./doctor.ts";

/** What the checks share: the options, settled once. */
export interface DoctorContext {
  /** The `binary` option. */
  readonly binary: string | undefined;
  /** The working directory (the option, else the current one). */
  readonly cwd: string;
  /** The CLI's environment; undefined when Deno may not read the host's. */
  readonly env: Readonly<Record<string, string | undefined>> | undefined;
  /** Whether `env` is the caller's (the env permission is then not needed). */
  readonly envGiven: boolean;
  /** The `isolation` option. */
  readonly isolation: "none" | "bubblewrap";
  /** The relay to check, if any. */
  readonly relay: DoctorOptions["relay"];
  /** The bound of each probe. */
  readonly timeoutMs: number;
  /** The caller's signal. */
  readonly signal: AbortSignal | undefined;
}
