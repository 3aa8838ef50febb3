/**
 * The `bwrap` command line of `isolation: "bubblewrap"`: which folders the
 * sandbox shows the CLI, read-only or read-write, and the flags around them.
 * Pure: no `Deno.*`, no I/O (`_isolation.ts` looks at the host).
 *
 * The layout (every folder at the path it has on the host):
 *
 * - read-only: `/usr`, `/bin`, `/sbin`, `/lib*` (those that exist), the
 *   pieces of `/etc` a CLI and its tools need ({@linkcode ETC_PIECES}: name
 *   resolution, certificates, users and groups, the dynamic linker's cache,
 *   `alternatives`, the time zone), the folder of the CLI's program, the
 *   private folder of its settings and MCP files, `isolationBinds.readOnly`;
 * - read-write: the working directory, the folders its environment names
 *   (`HOME`, `CLAUDE_CONFIG_DIR`, `TMPDIR`, `CLAUDE_CODE_TMPDIR`),
 *   `additionalDirectories`, `isolationBinds.readWrite`;
 * - its own `/proc` (a PID namespace: only the sandbox's processes), a
 *   minimal `/dev`, a private `/tmp` (memory), and a read-only root.
 *
 * A deeper folder is mounted after the folder that holds it, so the most
 * specific entry wins (a read-only folder inside the workspace stays
 * read-only); when one path is given both ways, read-only wins.
 *
 * @module
 */

import { DuplexError } from "../../src/errors.ts";

/** The isolation modes of the `isolation` option. */
export type IsolationMode = "none" | "bubblewrap";

/** The modes `isolation` accepts. */
export const ISOLATION_MODES: readonly IsolationMode[] = ["none", "bubblewrap"];

/** The system folders shown read-only (`/usr` must exist; the others where they do). */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * The pieces of `/etc` shown read-only, where they exist: name resolution,
 * TLS certificates (not `/etc/ssl/private`), users and groups, the linker's
 * cache, `alternatives` (Debian's `/usr/bin` links point there), the time zone.
 */
export const ETC_PIECES: readonly string[] = [
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/nsswitch.conf",
  "/etc/services",
  "/etc/protocols",
  "/etc/passwd",
  "/etc/group",
  "/etc/ssl/certs",
  "/etc/ssl/openssl.cnf",
  "/etc/ca-certificates",
  "/etc/ca-certificates.conf",
  "/etc/pki/ca-trust",
  "/etc/pki/tls/certs",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/localtime",
  "/etc/timezone",
];

/** The variables whose folders the sandbox shows read-write (created when missing). */
export const ENV_FOLDERS: readonly string[] = [
  "HOME",
  "CLAUDE_CONFIG_DIR",
  "TMPDIR",
  "CLAUDE_CODE_TMPDIR",
];

/** Paths no bind may be (the host's whole tree, the sandbox's own mounts). */
const RESERVED = new Set(["/", "/etc", "/proc", "/dev", "/sys", "/tmp"]);
/** Trees no bind may be inside (kernel interfaces). */
const RESERVED_TREES = ["/proc/", "/dev/", "/sys/"];

/** Where a launch runs and what it names: everything the layout depends on. */
export interface SandboxPlan {
  /** The CLI's program, absolute, links resolved (its folder is shown read-only). */
  readonly program: string;
  /** The arguments after the program (`executableArgs`, then the CLI flags). */
  readonly args: readonly string[];
  /** The working directory, absolute (shown read-write; the sandbox starts there). */
  readonly cwd: string;
  /** The CLI's environment, as the adapter decided it (`HOME` is required). */
  readonly env: Readonly<Record<string, string>>;
  /** The private folder of the launch's settings and MCP files, if any (read-only). */
  readonly privateDir?: string | undefined;
  /** `additionalDirectories`: shown read-write where they exist. */
  readonly additionalDirectories?: readonly string[] | undefined;
  /** `isolationBinds.readOnly`. */
  readonly readOnly?: readonly string[] | undefined;
  /** `isolationBinds.readWrite`. */
  readonly readWrite?: readonly string[] | undefined;
}

/**
 * The user and group id of the CLI in the sandbox, whoever runs the host
 * program: `nobody` / `nogroup`, mapped to the host's user (files it writes
 * are the host user's). A CLI that is root inside could not nest a sandbox
 * of its own: mapping uid 0 into a user namespace needs `CAP_SETFCAP`,
 * which the sandbox drops.
 */
export const SANDBOX_UID = 65534;

/** One folder (or file) the sandbox shows, at its host path. */
export interface SandboxBind {
  /** The path, absolute and normalised. */
  readonly path: string;
  /** Read-write (`--bind`) or read-only (`--ro-bind`). */
  readonly writable: boolean;
  /** Skipped when missing (`-try`). */
  readonly optional: boolean;
  /** What it is, for messages: `cwd`, `HOME`, `isolationBinds.readOnly[0]`, … */
  readonly role: string;
}

const WHAT = 'Cannot start claude with isolation "bubblewrap"';

/**
 * Normalises a path: absolute (a relative one is taken from `base`), without
 * `.`, `..`, repeated or trailing slashes.
 *
 * @param path The path.
 * @param base The folder a relative path is relative to (absolute).
 * @returns The normalised path.
 */
export function normalizePath(path: string, base: string): string {
  const parts: string[] = [];
  for (const part of (path.startsWith("/") ? path : `${base}/${path}`).split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

function depth(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}

/* Whether the bind is needed: one of the read-only system folders read-only again is not. */
function needed(bind: SandboxBind): boolean {
  const system = SYSTEM_DIRS.includes(bind.path);
  const reserved = RESERVED.has(bind.path) ||
    RESERVED_TREES.some((tree) => bind.path.startsWith(tree));
  if (reserved || (system && bind.writable)) {
    throw new DuplexError(
      "invalid_argument",
      `${WHAT}: ${bind.role} is ${bind.path}, which the sandbox cannot show (the host's whole ` +
        `tree, a system folder, or one of the sandbox's own); give the CLI a folder of its own`,
    );
  }
  return !system;
}

/**
 * The folders the sandbox shows besides the system, in mount order
 * (shallower first), each path once (read-only wins).
 *
 * @param plan The launch.
 * @returns The binds.
 * @throws {DuplexError} `invalid_argument` without `HOME`, or for a path the
 * sandbox cannot show (`/`, `/etc`, `/tmp`, a system folder read-write,
 * anything in `/proc`, `/dev`, `/sys`).
 */
export function sandboxBinds(plan: SandboxPlan): SandboxBind[] {
  const cwd = normalizePath(plan.cwd, "/");
  if (!plan.env.HOME?.trim()) {
    throw new DuplexError(
      "invalid_argument",
      `${WHAT}: the CLI's environment has no HOME, and the sandbox shows the CLI only its own ` +
        `folders; pass env: { HOME: <a folder of its own>, … } (read-write in the sandbox)`,
    );
  }
  const binds: SandboxBind[] = [];
  function add(path: string, writable: boolean, role: string, optional = false): void {
    binds.push({ path: normalizePath(path, cwd), writable, optional, role });
  }
  add(parentOf(normalizePath(plan.program, cwd)), false, "the program's folder");
  if (plan.privateDir !== undefined) add(plan.privateDir, false, "the private files' folder");
  for (const [i, path] of (plan.readOnly ?? []).entries()) {
    add(path, false, `isolationBinds.readOnly[${i}]`);
  }
  add(cwd, true, "cwd");
  for (const name of ENV_FOLDERS) {
    const value = plan.env[name]?.trim();
    // TMPDIR=/tmp names the system's temporary folder: inside, that is the private /tmp.
    if (!value || (name.endsWith("TMPDIR") && normalizePath(value, cwd) === "/tmp")) continue;
    add(value, true, name);
  }
  for (const [i, path] of (plan.additionalDirectories ?? []).entries()) {
    add(path, true, `additionalDirectories[${i}]`, true);
  }
  for (const [i, path] of (plan.readWrite ?? []).entries()) {
    add(path, true, `isolationBinds.readWrite[${i}]`);
  }
  const byPath = new Map<string, SandboxBind>();
  for (const bind of binds.filter(needed)) {
    const seen = byPath.get(bind.path);
    // Read-only wins; then a required entry wins over an optional one.
    const wins = seen === undefined || (seen.writable && !bind.writable) ||
      (seen.writable === bind.writable && seen.optional && !bind.optional);
    if (wins) byPath.set(bind.path, bind);
  }
  return [...byPath.values()].sort((a, b) => depth(a.path) - depth(b.path));
}

/**
 * The `bwrap` arguments (the program not included) that run the CLI in the
 * sandbox: the namespaces (`--unshare-all --share-net`: the host's network
 * stays, for the API), `--die-with-parent`, `--cap-drop ALL`, the system
 * read-only, `/proc`, `/dev`, a private `/tmp`, the binds, a read-only root,
 * the working directory, then `--` and the CLI's command line. The CLI
 * runs as {@linkcode SANDBOX_UID} inside, in a user namespace.
 *
 * No `--new-session`: it would move the CLI out of the process group the
 * adapter signals (the adapter spawns `bwrap` detached, in a session of its
 * own with no terminal, so the CLI has no terminal to inject into either).
 * No `--clearenv` / `--setenv`: `bwrap` is given exactly the CLI's
 * environment and passes it on, which keeps the values off the command line
 * (`ps`, `/proc/<pid>/cmdline`).
 *
 * @param plan The launch.
 * @returns The arguments.
 * @throws {DuplexError} `invalid_argument` as {@linkcode sandboxBinds} does.
 */
export function bubblewrapArgs(plan: SandboxPlan): string[] {
  const binds = sandboxBinds(plan);
  const id = String(SANDBOX_UID);
  const args = ["--unshare-all", "--share-net", "--unshare-user", "--uid", id, "--gid", id];
  args.push("--die-with-parent", "--cap-drop", "ALL");
  for (const dir of SYSTEM_DIRS) {
    args.push(dir === "/usr" ? "--ro-bind" : "--ro-bind-try", dir, dir);
  }
  for (const piece of ETC_PIECES) args.push("--ro-bind-try", piece, piece);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  for (const bind of binds) {
    const flag = `${bind.writable ? "--bind" : "--ro-bind"}${bind.optional ? "-try" : ""}`;
    args.push(flag, bind.path, bind.path);
  }
  args.push("--remount-ro", "/", "--chdir", normalizePath(plan.cwd, "/"));
  args.push("--", plan.program, ...plan.args);
  return args;
}

/** The options of `isolation` (see `SubprocessOptions.isolation`). */
export interface IsolationOptions {
  readonly isolation?: IsolationMode;
  readonly isolationBinds?: {
    readonly readOnly?: readonly string[];
    readonly readWrite?: readonly string[];
  };
}

const OPTIONS = "Cannot use the subprocess options";

/**
 * Checks `isolation` and `isolationBinds` (when the factory is made).
 *
 * @param options The options given.
 * @returns The isolation mode, `"none"` by default.
 * @throws {TypeError} For a value of the wrong type.
 * @throws {DuplexError} `invalid_argument` for an unknown mode, a relative
 * or empty path, or binds without `isolation: "bubblewrap"`.
 */
export function checkIsolation(options: IsolationOptions): IsolationMode {
  const mode = options.isolation ?? "none";
  if (!ISOLATION_MODES.includes(mode)) {
    throw new DuplexError(
      "invalid_argument",
      `${OPTIONS}: isolation must be one of ${ISOLATION_MODES.join(", ")}, got ${
        JSON.stringify(mode)
      }`,
    );
  }
  const binds = options.isolationBinds;
  if (binds === undefined) return mode;
  if (typeof binds !== "object" || binds === null || Array.isArray(binds)) {
    throw new TypeError(`${OPTIONS}: isolationBinds must be an object`);
  }
  if (mode !== "bubblewrap") {
    throw new DuplexError(
      "invalid_argument",
      `${OPTIONS}: isolationBinds needs isolation: "bubblewrap" (got ${JSON.stringify(mode)})`,
    );
  }
  for (const name of ["readOnly", "readWrite"] as const) {
    const paths = binds[name];
    if (paths === undefined) continue;
    if (!Array.isArray(paths)) {
      throw new TypeError(`${OPTIONS}: isolationBinds.${name} must be an array`);
    }
    for (const [i, path] of paths.entries()) {
      if (typeof path !== "string") {
        throw new TypeError(`${OPTIONS}: isolationBinds.${name}[${i}] must be a string`);
      }
      if (!path.startsWith("/") || path.includes("\0")) {
        throw new DuplexError(
          "invalid_argument",
          `${OPTIONS}: isolationBinds.${name}[${i}] must be an absolute path, got ${
            JSON.stringify(path)
          }`,
        );
      }
    }
  }
  return mode;
}
