/*
 * A CLI that runs in another permission mode than the one its transport
 * asked for would run tools the host's permission handler never sees
 * (2.1.300's default mode is `auto`). The session checks the mode the CLI
 * reports before its first turn against `transport.info.cli` and, on a
 * mismatch, fails the turn, interrupts it and ends: the tool never runs.
 */
import assert from "node:assert/strict";
import { DuplexSession, isDuplexError } from "../../mod.ts";
import { CLI_FEATURES, type CliFeatureName } from "../../src/compat/cli_features.ts";
import { CLI_WINDOW, parseCliVersion } from "../../src/compat/cli_versions.ts";
import { controlSuccess } from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import {
  assistantToolUseFrame,
  initFrame,
  resultFrame,
  userToolResultFrame,
} from "../../src/testing/turn_frames.ts";
import { CliCheck } from "../../src/session/_cli_check.ts";
import { launchedBy } from "../compat/_helpers.ts";
import type { TransportFactory } from "../../src/transport/transport.ts";

function asking(cli: ScriptedCli, permissionMode: string, version?: string): TransportFactory {
  return launchedBy(cli, { permissionMode, ...(version && { version }) });
}

/**
 * A CLI in `mode` (2.1.300's `auto`, which asks nobody): a user line gets
 * `system/init`; then, unless an interrupt comes within 200 ms, it runs
 * `Bash(touch …)` without a `can_use_tool` request and finishes the turn.
 */
function cliIn(mode: string): { cli: ScriptedCli; ran: () => boolean } {
  let ran = false;
  const cli = new ScriptedCli({ echo: true }).on("user", async (frame, self) => {
    self.emit({ ...initFrame({ permissionMode: mode }), claude_code_version: "2.1.300" });
    const stopped = await self.nextWrite("control_request:interrupt", { timeoutMs: 200 })
      .then(() => true, () => false);
    if (stopped) return [];
    ran = true;
    const uuid = typeof frame.uuid === "string" ? frame.uuid : undefined;
    const ids = uuid === undefined ? {} : { userMessageUuid: uuid };
    return [
      assistantToolUseFrame({ id: "toolu_1", name: "Bash", input: { command: "touch x" }, ...ids }),
      userToolResultFrame({ toolUseId: "toolu_1", content: "" }),
      resultFrame({ text: "done", ...ids }),
    ];
  });
  return { cli, ran: () => ran };
}

Deno.test("a CLI that reports another permission mode in system/init: the turn fails, no tool runs", async () => {
  const { cli, ran } = cliIn("auto");
  const asked: string[] = [];
  await using session = await DuplexSession.start({
    transport: asking(cli, "default"),
    onPermission: (request) => {
      asked.push(request.toolName);
      return { behavior: "allow" };
    },
  });
  const error = await session.send("touch x").then(() => undefined, (e: unknown) => e);
  assert.ok(isDuplexError(error, "unsupported"), String(error));
  assert.match(error.message, /permission mode "default" \(--permission-mode=default\)/);
  assert.match(error.message, /claude 2\.1\.300 reports "auto" in its system\/init frame/);
  const status = await session.waitForExit({ timeoutMs: 3000 });
  const interrupts = cli.received.filter((f) =>
    f.type === "control_request" && (f.request as Record<string, unknown>).subtype === "interrupt"
  );
  assert.deepEqual(interrupts.map((f) => (f.request as Record<string, unknown>).cancel_queued), [
    true,
  ]);
  assert.equal(status.state, "failed");
  assert.equal(status.state === "failed" && status.error, error);
  assert.equal(ran(), false, "the tool ran");
  assert.deepEqual(asked, []);
  await assert.rejects(session.send("again"), (e: unknown) => e === error);
});

Deno.test("a CLI whose initialize reply reports another permission mode: initialized rejects, no turn runs", async () => {
  const { cli, ran } = cliIn("auto");
  cli.on("control_request:initialize", (frame) => [
    controlSuccess(String(frame.request_id), {
      current_permission_mode: "auto",
      claude_code_version: "2.1.300",
    }),
  ]);
  await using session = await DuplexSession.start({
    transport: asking(cli, "default"),
    initialize: true,
  });
  const error = await session.initialized.then(() => undefined, (e: unknown) => e);
  assert.ok(isDuplexError(error, "unsupported"), String(error));
  assert.equal(error.subtype, "initialize");
  assert.match(error.message, /claude 2\.1\.300 reports "auto" in its initialize reply/);
  await assert.rejects(session.send("touch x"), (e: unknown) => e === error);
  assert.equal((await session.waitForExit({ timeoutMs: 3000 })).state, "failed");
  assert.equal(cli.received.filter((f) => f.type === "user").length, 0);
  assert.equal(ran(), false);
});

Deno.test("the CLI reports the mode asked for, or one the host set before the first turn: turns run", async (t) => {
  await t.step("the mode asked for", async () => {
    const cli = new ScriptedCli({ echo: true });
    await using session = await DuplexSession.start({ transport: asking(cli, "default") });
    assert.equal((await session.send("hi")).result.text, "Echo: hi");
    assert.equal((await session.send("again")).result.text, "Echo: again");
  });
  await t.step("a mode set before the first turn", async () => {
    const { cli, ran } = cliIn("plan");
    cli.on("control_request:set_permission_mode", (frame) => [
      controlSuccess(String(frame.request_id), { mode: "plan" }),
    ]);
    await using session = await DuplexSession.start({ transport: asking(cli, "default") });
    await session.setPermissionMode("plan");
    assert.equal((await session.send("touch x")).result.text, "done");
    assert.equal(ran(), true);
  });
  await t.step("manual, the newer name of default", async () => {
    const cli = new ScriptedCli({ echo: true });
    await using session = await DuplexSession.start({ transport: asking(cli, "manual") });
    assert.equal((await session.send("hi")).result.text, "Echo: hi");
  });
  await t.step("later reports are not checked (the mode may change in the session)", async () => {
    let turns = 0;
    const cli = new ScriptedCli({ echo: true }).on("user", (frame) => {
      turns += 1;
      const uuid = typeof frame.uuid === "string" ? { userMessageUuid: frame.uuid } : {};
      return [
        initFrame({ permissionMode: turns === 1 ? "default" : "acceptEdits" }),
        resultFrame({ text: `turn ${turns}`, ...uuid }),
      ];
    });
    await using session = await DuplexSession.start({ transport: asking(cli, "default") });
    assert.equal((await session.send("one")).result.text, "turn 1");
    assert.equal((await session.send("two")).result.text, "turn 2");
  });
});

Deno.test("a transport that states no mode is not checked", async () => {
  const { cli, ran } = cliIn("auto");
  await using session = await DuplexSession.start({ transport: cli.transport });
  assert.equal((await session.send("touch x")).result.text, "done");
  assert.equal(ran(), true);
});

/** The version just before one: `2.1.299` for `2.1.300`. */
function before(version: string): string {
  const v = parseCliVersion(version)!;
  return `${v.major}.${v.minor}.${v.patch - 1}`;
}

Deno.test("a CLI below the window: start refuses when the transport knows the version", async () => {
  const cli = new ScriptedCli({ echo: true });
  const old = before(CLI_WINDOW.floor);
  await assert.rejects(
    DuplexSession.start({ transport: asking(cli, "default", old) }),
    (error: unknown) => {
      assert.ok(isDuplexError(error, "unsupported"), String(error));
      assert.ok(error.message.includes(`claude ${old} is older than ${CLI_WINDOW.floor}`));
      return true;
    },
  );
  assert.equal(cli.closeCalls, 1, "the transport was closed");
  assert.deepEqual(cli.received, []);
});

Deno.test("a CLI below the window, known from its first system/init: the turn fails, the session ends", async () => {
  const old = before(CLI_WINDOW.floor);
  const cli = new ScriptedCli({ echo: true }).on("user", () => [
    { ...initFrame(), claude_code_version: old },
  ]);
  await using session = await DuplexSession.start({ transport: asking(cli, "default") });
  await assert.rejects(session.send("hi"), (error: unknown) => {
    assert.ok(isDuplexError(error, "unsupported"), String(error));
    assert.match(error.message, /^Cannot run the session: claude \S+ is older than/);
    return true;
  });
  assert.equal((await session.waitForExit({ timeoutMs: 3000 })).state, "failed");
});

Deno.test("a hook event the CLI's version lacks: start refuses; from the initialize reply, the session ends", async (t) => {
  const events = (Object.keys(CLI_FEATURES) as CliFeatureName[]).flatMap((name) => {
    const uses = CLI_FEATURES[name].uses;
    return "hookEvent" in uses ? [[name, uses.hookEvent] as const] : [];
  });
  for (const [name, event] of events) {
    const old = before(CLI_FEATURES[name].since);
    const hooks = { [event]: [{ run: () => ({}) }] } as never;
    await t.step(`${event}, the version from the transport`, async () => {
      const cli = new ScriptedCli({ echo: true });
      await assert.rejects(
        DuplexSession.start({ transport: asking(cli, "default", old), hooks }),
        (error: unknown) => {
          assert.ok(isDuplexError(error, "unsupported"), String(error));
          assert.ok(error.message.includes(`the ${event} hook event`), error.message);
          assert.ok(error.message.includes(`this claude is ${old}`), error.message);
          return true;
        },
      );
    });
    await t.step(`${event}, the version from the initialize reply`, async () => {
      const cli = new ScriptedCli({ echo: true }).on("control_request:initialize", (frame) => [
        controlSuccess(String(frame.request_id), { claude_code_version: old }),
      ]);
      await using session = await DuplexSession.start({ transport: asking(cli, "default"), hooks });
      await assert.rejects(session.initialized, (e: unknown) => isDuplexError(e, "unsupported"));
      await assert.rejects(session.send("hi"), (e: unknown) => isDuplexError(e, "unsupported"));
      assert.equal(cli.received.filter((f) => f.type === "user").length, 0);
    });
  }
});

Deno.test("the check refuses a control request of a feature the version lacks, and says once what it does without", () => {
  const diagnostics: string[] = [];
  const subtypes = (Object.keys(CLI_FEATURES) as CliFeatureName[]).flatMap((name) => {
    const { uses, below, since } = CLI_FEATURES[name];
    return "subtype" in uses ? [{ name, subtype: uses.subtype, below, since }] : [];
  });
  assert.ok(subtypes.length > 0);
  for (const { name, subtype, below, since } of subtypes) {
    const old = before(since);
    const info = { kind: "test", cli: { permissionMode: "default", version: old } };
    const check = CliCheck.of(info, [], {
      refuse: () => assert.fail("no refusal"),
      publish: (event) => diagnostics.push(`${event.kind}: ${event.message}`),
    })!;
    if (below.kind === "unsupported") {
      assert.throws(() => check.require(subtype), (error: unknown) => {
        assert.ok(isDuplexError(error, "unsupported"), String(error));
        assert.ok(error.message.includes(`this claude is ${old}`), error.message);
        return true;
      });
    } else {
      check.require(subtype); // degrades: the caller does without it
      assert.equal(check.lacks(name), true);
      assert.equal(check.lacks(name), true);
      assert.equal(diagnostics.filter((d) => d.includes(CLI_FEATURES[name].title)).length, 1);
      assert.match(diagnostics.at(-1)!, new RegExp(`^feature_degraded: claude ${old} has no `));
    }
    const newer = { kind: "test", cli: { version: since } };
    const current = CliCheck.of(newer, [], {
      refuse: () => assert.fail("no refusal"),
      publish: () => assert.fail("no diagnostic"),
    })!;
    current.require(subtype);
    assert.equal(current.lacks(name), false);
  }
});
