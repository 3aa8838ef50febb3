/**
 * Where each owner's CLIs run. With tenancy `"per-owner"` (the default) an
 * owner (a credential's `owner`: a static token or a scoped token's subject)
 * gets a folder of its own under the relay's workspace,
 * `<workspace>/tenants/<id>/` (`id`: a hash of the owner, never the token),
 * mode 0700, holding:
 *
 * - `home/`: its `HOME`, and `home/.claude` its `CLAUDE_CONFIG_DIR` (the
 *   CLI's settings and transcripts: `--resume` and hibernation find them
 *   there);
 * - `tmp/`: its `TMPDIR` and `CLAUDE_CODE_TMPDIR`, and the private files of
 *   each launch (`tempDir`, unless the relay's `cli.tempDir` names one);
 * - `work/`: its workspace root, inside which a client's `spawn.cwd` (and a
 *   scoped token's `cwd`) is resolved.
 *
 * With `"shared"`, every session runs in the workspace with the relay's own
 * `HOME` and configuration folder.
 *
 * @module
 */

import { DuplexError } from "../../src/errors.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import { TENANT_ENV } from "./_cli_env.ts";

/** How the sessions of different owners share the host; see `RelayOptions.tenancy`. */
export type Tenancy = "per-owner" | "shared";

/** The accepted values of `RelayOptions.tenancy`. */
export const TENANCIES: readonly Tenancy[] = ["per-owner", "shared"];

/** The folder of the owners' folders, inside the workspace. */
export const TENANTS_FOLDER = "tenants";

/**
 * Checks the `tenancy` option against the CLI options: with `"per-owner"`,
 * `cli.env` and `cli.extraEnv` may not set the variables of the owner's own
 * folders ({@linkcode TENANT_ENV}).
 *
 * @param value The option.
 * @param cli The relay's subprocess options.
 * @returns The tenancy (default `"per-owner"`).
 * @throws {DuplexError} `invalid_argument` for another value, or such a variable.
 */
export function checkTenancy(value: unknown, cli: SubprocessOptions): Tenancy {
  const tenancy = value ?? "per-owner";
  if (!TENANCIES.includes(tenancy as Tenancy)) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot serve the relay: tenancy must be one of ${TENANCIES.join(", ")}, got ${
        JSON.stringify(tenancy)
      }`,
    );
  }
  if (tenancy === "shared") return tenancy;
  for (const option of ["env", "extraEnv"] as const) {
    const name = TENANT_ENV.find((name) => cli[option]?.[name] !== undefined);
    if (name === undefined) continue;
    throw new DuplexError(
      "invalid_argument",
      `Cannot serve the relay: cli.${option}.${name} would be every owner's; with tenancy ` +
        `"per-owner" (the default) each owner gets its own (${TENANTS_FOLDER}/<id>/ in the ` +
        `workspace); leave ${name} out, or pass tenancy: "shared" for one for every session`,
    );
  }
  return "per-owner";
}

/** Where one owner's CLIs run. */
export interface Place {
  /** The subprocess options: the relay's, with the CLI's whole environment as `env`. */
  readonly cli: SubprocessOptions;
  /** The real path of the root inside which its sessions' `cwd` is resolved. */
  readonly workspace: string;
}

/**
 * The folder name of an owner: 128 bits of the SHA-256 of the owner, in hex
 * (never the owner itself, which may be a static token).
 *
 * @param owner A credential's owner (`token:…` or `sub:…`).
 * @returns 32 hex digits.
 */
export async function tenantId(owner: string): Promise<string> {
  const bytes = new TextEncoder().encode(`duplex-relay-tenant\0${owner}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest.subarray(0, 16), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The places of the owners of one relay. */
export class Tenants {
  readonly #mode: Tenancy;
  readonly #root: string;
  readonly #cli: SubprocessOptions;
  readonly #env: Readonly<Record<string, string>>;

  /**
   * @param mode The tenancy.
   * @param root The real path of the relay's workspace.
   * @param cli The relay's subprocess options.
   * @param env The environment every CLI starts from (`relayCliEnv`).
   */
  constructor(
    mode: Tenancy,
    root: string,
    cli: SubprocessOptions,
    env: Readonly<Record<string, string>>,
  ) {
    this.#mode = mode;
    this.#root = root;
    const { env: _env, extraEnv: _extra, clearEnv: _clear, ...rest } = cli;
    this.#cli = rest;
    this.#env = env;
  }

  /** The tenancy. */
  get mode(): Tenancy {
    return this.#mode;
  }

  /**
   * Where an owner's CLIs run; with `"per-owner"`, its folders are made
   * (mode 0700) when missing.
   *
   * @param owner The credential's owner.
   * @returns Its place.
   * @throws {DuplexError} `invalid_argument` when a folder of it is a link or not a folder.
   */
  async place(owner: string): Promise<Place> {
    if (this.#mode === "shared") {
      return { cli: { ...this.#cli, env: { ...this.#env } }, workspace: this.#root };
    }
    const base = `${this.#root}/${TENANTS_FOLDER}/${await tenantId(owner)}`;
    const home = `${base}/home`;
    const tmp = `${base}/tmp`;
    const work = `${base}/work`;
    const folders = [`${this.#root}/${TENANTS_FOLDER}`, base, home, `${home}/.claude`, tmp, work];
    for (const folder of folders) await makeFolder(folder);
    // The names of TENANT_ENV.
    const own = {
      HOME: home,
      CLAUDE_CONFIG_DIR: `${home}/.claude`,
      TMPDIR: tmp,
      CLAUDE_CODE_TMPDIR: tmp,
    };
    return {
      cli: {
        ...this.#cli,
        ...(this.#cli.tempDir === undefined && { tempDir: tmp }),
        env: { ...this.#env, ...own },
      },
      workspace: work,
    };
  }
}

/* Makes a folder of an owner's (0700), refusing a link or a file planted in its place. */
async function makeFolder(path: string): Promise<void> {
  try {
    await Deno.mkdir(path, { mode: 0o700 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  const info = await Deno.lstat(path);
  if (!info.isDirectory || info.isSymlink) {
    throw new DuplexError(
      "invalid_argument",
      "Cannot start claude on the relay: a folder of this owner's is a link or not a folder; " +
        "the relay's operator must remove it",
    );
  }
  if (info.mode !== null && (info.mode & 0o077) !== 0) await Deno.chmod(path, 0o700);
}
