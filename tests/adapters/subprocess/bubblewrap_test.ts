/**
 * The `bwrap` command line of `isolation: "bubblewrap"` (`_bubblewrap.ts`,
 * pure, table style), the checks of the `isolation` options, and the start
 * that fails when `bwrap` is missing (never running unsandboxed).
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  bubblewrapArgs,
  checkIsolation,
  ETC_PIECES,
  normalizePath,
  type SandboxBind,
  sandboxBinds,
  type SandboxPlan,
} from "../../../adapters/subprocess/_bubblewrap.ts";
import { subprocess } from "../../../adapters/subprocess/mod.ts";
import { isDuplexError } from "../../../src/errors.ts";

const PROGRAM = "/opt/claude/bin/claude";
const BASE: SandboxPlan = {
  program: PROGRAM,
  args: ["--verbose"],
  cwd: "/srv/tenants/alice/work",
  env: { HOME: "/srv/tenants/alice/home", PATH: "/usr/bin", ANTHROPIC_API_KEY: "sk-secret" },
};

/** The binds as `flag path` strings, in mount order. */
function binds(plan: Partial<SandboxPlan>): string[] {
  return sandboxBinds({ ...BASE, ...plan }).map((bind: SandboxBind) =>
    `${bind.writable ? "rw" : "ro"}${bind.optional ? "?" : ""} ${bind.path}`
  );
}

Deno.test({
  name: "bubblewrapArgs() runs the CLI with the documented layout, flags and command line",
  permissions: "none",
  fn() {
    const etc = ETC_PIECES.flatMap((piece) => ["--ro-bind-try", piece, piece]);
    assert.deepEqual(bubblewrapArgs(BASE), [
      "--unshare-all",
      "--share-net",
      "--unshare-user",
      "--uid",
      "65534",
      "--gid",
      "65534",
      "--die-with-parent",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/usr",
      "/usr",
      ...["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"].flatMap((dir) => [
        "--ro-bind-try",
        dir,
        dir,
      ]),
      ...etc,
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--tmpfs",
      "/tmp",
      "--ro-bind",
      "/opt/claude/bin",
      "/opt/claude/bin",
      "--bind",
      "/srv/tenants/alice/work",
      "/srv/tenants/alice/work",
      "--bind",
      "/srv/tenants/alice/home",
      "/srv/tenants/alice/home",
      "--remount-ro",
      "/",
      "--chdir",
      "/srv/tenants/alice/work",
      "--",
      PROGRAM,
      "--verbose",
    ]);
  },
});

Deno.test({
  name: "bubblewrapArgs() keeps the environment off the command line and the CLI in its group",
  permissions: "none",
  fn() {
    const args = bubblewrapArgs({
      ...BASE,
      env: { ...BASE.env, DUPLEX_RELAY_SECRETS: "topsecret" },
    });
    const text = args.join(" ");
    assert.ok(!text.includes("sk-secret") && !text.includes("topsecret"), text);
    for (const flag of ["--clearenv", "--setenv", "--new-session", "--cap-add", "--bind /"]) {
      assert.ok(!args.includes(flag), `${flag} in ${text}`);
    }
    assert.ok(!ETC_PIECES.some((piece) => piece.startsWith("/etc/ssl/private")));
  },
});

/** Plans and the binds they give (besides the system), in mount order. */
const LAYOUTS: ReadonlyArray<readonly [string, Partial<SandboxPlan>, readonly string[]]> = [
  ["the basics: program folder, cwd, HOME", {}, [
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
  ]],
  ["the folders the environment names", {
    env: {
      HOME: "/t/home",
      CLAUDE_CONFIG_DIR: "/t/config",
      TMPDIR: "/t/tmp",
      CLAUDE_CODE_TMPDIR: "/t/cctmp",
    },
  }, [
    "rw /t/home",
    "rw /t/config",
    "rw /t/tmp",
    "rw /t/cctmp",
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
  ]],
  ["TMPDIR=/tmp is the private /tmp", {
    env: { HOME: "/t/home", TMPDIR: "/tmp/", CLAUDE_CODE_TMPDIR: "/tmp" },
  }, ["rw /t/home", "ro /opt/claude/bin", "rw /srv/tenants/alice/work"]],
  ["relative folders are the cwd's, normalised", {
    cwd: "/w/./x//",
    env: { HOME: "../home/", CLAUDE_CONFIG_DIR: "cfg" },
  }, ["rw /w/x", "rw /w/home", "ro /opt/claude/bin", "rw /w/x/cfg"]],
  ["one bind per path (HOME is the cwd)", { env: { HOME: "/srv/tenants/alice/work" } }, [
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
  ]],
  ["a program in the system needs no bind", { program: "/usr/local/bin/claude" }, [
    "ro /usr/local/bin",
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
  ]],
  ["a program in /bin is not refused", { program: "/bin/claude" }, [
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
  ]],
  ["the private files' folder read-only", { privateDir: "/tmp/duplex-claude-x" }, [
    "ro /tmp/duplex-claude-x",
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
  ]],
  ["a read-only folder inside the workspace is mounted after it", {
    readOnly: ["/srv/tenants/alice/work/vendor"],
  }, [
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
    "ro /srv/tenants/alice/work/vendor",
  ]],
  ["a writable folder inside a read-only one is mounted after it", {
    readOnly: ["/data"],
    readWrite: ["/data/out"],
  }, [
    "ro /data",
    "rw /data/out",
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
  ]],
  ["a path given both ways is read-only", {
    readOnly: ["/shared"],
    readWrite: ["/shared"],
  }, [
    "ro /shared",
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
  ]],
  ["the program's folder stays read-only inside the workspace", {
    program: "/srv/tenants/alice/work/claude",
  }, ["ro /srv/tenants/alice/work", "rw /srv/tenants/alice/home"]],
  ["additionalDirectories read-write where they exist", {
    additionalDirectories: ["/srv/extra"],
  }, [
    "rw? /srv/extra",
    "ro /opt/claude/bin",
    "rw /srv/tenants/alice/work",
    "rw /srv/tenants/alice/home",
  ]],
];

Deno.test({
  name: "sandboxBinds() shows each folder once, read-only winning, deeper ones mounted later",
  permissions: "none",
  async fn(t) {
    for (const [name, plan, expected] of LAYOUTS) {
      await t.step(name, () => assert.deepEqual(binds(plan), expected));
    }
  },
});

Deno.test({
  name: "bubblewrapArgs() marks optional binds -try and mounts each path at itself",
  permissions: "none",
  fn() {
    const args = bubblewrapArgs({ ...BASE, additionalDirectories: ["/srv/extra"] });
    const at = args.indexOf("--bind-try");
    assert.deepEqual(args.slice(at, at + 3), ["--bind-try", "/srv/extra", "/srv/extra"]);
    // The binds come after the private /tmp, the root is made read-only after them.
    assert.ok(args.indexOf("--tmpfs") < at && at < args.indexOf("--remount-ro"));
  },
});

/** Plans the sandbox refuses, and a piece of the message. */
const REFUSED: ReadonlyArray<readonly [string, Partial<SandboxPlan>, string]> = [
  ["no HOME", { env: { PATH: "/usr/bin" } }, "has no HOME"],
  ["a blank HOME", { env: { HOME: " " } }, "has no HOME"],
  ["HOME=/", { env: { HOME: "/" } }, "HOME is /,"],
  ["HOME=/tmp", { env: { HOME: "/tmp" } }, "HOME is /tmp,"],
  [
    "CLAUDE_CONFIG_DIR=/etc",
    { env: { HOME: "/h", CLAUDE_CONFIG_DIR: "/etc" } },
    "CLAUDE_CONFIG_DIR",
  ],
  ["cwd=/", { cwd: "/" }, "cwd is /,"],
  ["cwd in /proc", { cwd: "/proc/1/root" }, "cwd is /proc/1/root"],
  ["a system folder read-write", { readWrite: ["/usr"] }, "isolationBinds.readWrite[0] is /usr"],
  ["/lib64 read-write", { readWrite: ["/lib64"] }, "isolationBinds.readWrite[0] is /lib64"],
  ["/ read-only", { readOnly: ["/"] }, "isolationBinds.readOnly[0] is /,"],
  ["a device", { readOnly: ["/dev/sda"] }, "is /dev/sda"],
  ["/sys", { readOnly: ["/sys/kernel"] }, "is /sys/kernel"],
  ["an add-dir of /", { additionalDirectories: ["/"] }, "additionalDirectories[0] is /,"],
  ["a program at /", { program: "/claude" }, "the program's folder is /,"],
];

Deno.test({
  name: "sandboxBinds() refuses a plan that would undo the sandbox, naming the option",
  permissions: "none",
  async fn(t) {
    for (const [name, plan, piece] of REFUSED) {
      await t.step(name, () => {
        assert.throws(
          () => bubblewrapArgs({ ...BASE, ...plan }),
          (error: unknown) => {
            assert.ok(isDuplexError(error, "invalid_argument"), String(error));
            assert.ok(error.message.includes(piece), error.message);
            assert.match(error.message, /^Cannot start claude with isolation "bubblewrap": /);
            return true;
          },
        );
      });
    }
  },
});

Deno.test({
  name: "normalizePath() resolves relative paths, dots and repeated slashes",
  permissions: "none",
  fn() {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["/a/b/", "/x", "/a/b"],
      ["b", "/a", "/a/b"],
      ["../c/./d", "/a/b", "/a/c/d"],
      ["/../..", "/x", "/"],
      ["//a///b", "/", "/a/b"],
    ];
    for (const [path, base, expected] of cases) {
      assert.equal(normalizePath(path, base), expected, `${path} from ${base}`);
    }
  },
});

/** Options and what `checkIsolation` throws: a TypeError, or an invalid_argument with a piece. */
const OPTIONS: ReadonlyArray<readonly [string, unknown, "TypeError" | string | undefined]> = [
  ["none by default", {}, undefined],
  ["none", { isolation: "none" }, undefined],
  ["bubblewrap with binds", {
    isolation: "bubblewrap",
    isolationBinds: { readOnly: ["/a"], readWrite: ["/b"] },
  }, undefined],
  [
    "an unknown mode",
    { isolation: "docker" },
    'isolation must be one of none, bubblewrap, got "docker"',
  ],
  [
    "binds without bubblewrap",
    { isolationBinds: { readOnly: ["/a"] } },
    'needs isolation: "bubblewrap"',
  ],
  ["binds not an object", { isolation: "bubblewrap", isolationBinds: ["/a"] }, "TypeError"],
  [
    "readOnly not an array",
    { isolation: "bubblewrap", isolationBinds: { readOnly: "/a" } },
    "TypeError",
  ],
  [
    "a bind not a string",
    { isolation: "bubblewrap", isolationBinds: { readWrite: [1] } },
    "TypeError",
  ],
  ["a relative bind", {
    isolation: "bubblewrap",
    isolationBinds: { readWrite: ["data"] },
  }, 'isolationBinds.readWrite[0] must be an absolute path, got "data"'],
];

Deno.test({
  name: "subprocess() checks isolation and isolationBinds before anything is spawned",
  permissions: "none",
  async fn(t) {
    for (const [name, options, expected] of OPTIONS) {
      await t.step(name, () => {
        const make = (): unknown => subprocess(options as Parameters<typeof subprocess>[0]);
        if (expected === undefined) {
          make();
          assert.equal(
            checkIsolation(options as never),
            (options as { isolation?: string }).isolation ?? "none",
          );
        } else if (expected === "TypeError") {
          assert.throws(make, TypeError);
        } else {
          assert.throws(make, (error: unknown) => {
            assert.ok(isDuplexError(error, "invalid_argument"), String(error));
            assert.ok(error.message.includes(expected), error.message);
            return true;
          });
        }
      });
    }
  },
});

Deno.test("subprocess() with isolation fails at start, naming the package, where bwrap is not on PATH", async () => {
  const empty = await Deno.makeTempDir({ dir: ".cache", prefix: "no-bwrap-" });
  const path = Deno.env.get("PATH");
  Deno.env.set("PATH", `${Deno.cwd()}/${empty}`);
  try {
    const open = subprocess({
      pathToClaudeCodeExecutable: Deno.execPath(),
      env: { HOME: `${Deno.cwd()}/${empty}` },
      isolation: "bubblewrap",
      settings: { env: { A: "b" } },
      tempDir: empty,
    });
    await assert.rejects(open({ signal: new AbortController().signal }), (error: unknown) => {
      assert.ok(isDuplexError(error, "unsupported"), String(error));
      assert.match(error.message, /^Cannot start claude with isolation "bubblewrap": bwrap/);
      assert.ok(error.message.includes("apt-get install bubblewrap"), error.message);
      assert.ok(error.message.includes(`searched ${Deno.cwd()}/${empty}`), error.message);
      return true;
    });
    // Nothing was left behind: the private files' folder went with the failed start.
    assert.deepEqual(await Array.fromAsync(Deno.readDir(empty)), []);
  } finally {
    if (path === undefined) Deno.env.delete("PATH");
    else Deno.env.set("PATH", path);
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("subprocess() with isolation refuses a missing bind before the spawn, making nothing", async () => {
  const root = await Deno.makeTempDir({ dir: ".cache", prefix: "bwrap-binds-" });
  const at = `${Deno.cwd()}/${root}`;
  try {
    const open = subprocess({
      pathToClaudeCodeExecutable: Deno.execPath(),
      cwd: at,
      env: { HOME: `${at}/home`, CLAUDE_CONFIG_DIR: `${at}/config` },
      isolation: "bubblewrap",
      isolationBinds: { readOnly: [`${at}/missing`] },
    });
    await assert.rejects(open({ signal: new AbortController().signal }), (error: unknown) => {
      assert.ok(isDuplexError(error, "invalid_argument"), String(error));
      assert.equal(
        error.message,
        `Cannot start claude with isolation "bubblewrap": isolationBinds.readOnly[0] ` +
          `${at}/missing does not exist; create it or pass another`,
      );
      return true;
    });
    assert.deepEqual(await Array.fromAsync(Deno.readDir(root)), [], "HOME was not made");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("subprocess() with isolation fails at the spawn, naming the package, when bwrap is not found there", async () => {
  // Deno may not look at this folder (-P reads "." only): the lookup leaves the search to the spawn,
  // whose PATH (the CLI's environment) has no bwrap either.
  const empty = await Deno.makeTempDir({ dir: ".cache", prefix: "no-bwrap-" });
  const path = Deno.env.get("PATH");
  Deno.env.set("PATH", "/nonexistent-duplex-dir");
  try {
    const open = subprocess({
      pathToClaudeCodeExecutable: Deno.execPath(),
      env: { HOME: `${Deno.cwd()}/${empty}`, PATH: `${Deno.cwd()}/${empty}` },
      isolation: "bubblewrap",
    });
    await assert.rejects(open({ signal: new AbortController().signal }), (error: unknown) => {
      assert.ok(isDuplexError(error, "unsupported"), String(error));
      assert.ok(error.message.includes("apt-get install bubblewrap"), error.message);
      return true;
    });
  } finally {
    if (path === undefined) Deno.env.delete("PATH");
    else Deno.env.set("PATH", path);
    await Deno.remove(empty, { recursive: true });
  }
});
