import assert from "node:assert/strict";
import {
  type CliOptions,
  planLaunch,
  type SandboxSettings,
} from "../../../adapters/subprocess/mod.ts";
import { launchPlan } from "../../../adapters/subprocess/build_args.ts";

const DIR = "/run/private";

function fileOf(options: CliOptions, name: string): unknown {
  const plan = planLaunch(options, DIR);
  const contents = plan.files[name];
  assert.ok(contents !== undefined, `no ${name} in ${JSON.stringify(Object.keys(plan.files))}`);
  return JSON.parse(contents);
}

Deno.test({
  name: "planLaunch() keeps planted secrets off the arguments and in the private files",
  permissions: "none",
  fn: async (t) => {
    const secret = "sk-planted-7f3a";
    const cases: ReadonlyArray<readonly [string, CliOptions, string, string]> = [
      [
        "settings object",
        { settings: { env: { API_TOKEN: secret } } },
        "settings.json",
        "settings",
      ],
      [
        "settings JSON text",
        { settings: `{"apiKeyHelper":"echo ${secret}"}` },
        "settings.json",
        "settings",
      ],
      [
        "sandbox",
        { sandbox: { network: { allowedDomains: [secret] } } },
        "settings.json",
        "settings",
      ],
      [
        "agents object",
        { agents: { a: { description: "d", prompt: secret } } },
        "agents.json",
        "agents",
      ],
      [
        "mcpConfig env",
        {
          mcpConfig: { mcpServers: { s: { command: "srv", env: { TOKEN: secret } } } },
        },
        "mcp.json",
        "mcp-config",
      ],
      [
        "mcpConfig headers",
        {
          mcpConfig: {
            mcpServers: {
              h: { type: "http", url: "http://x", headers: { Authorization: secret } },
            },
          },
        },
        "mcp.json",
        "mcp-config",
      ],
    ];
    for (const [name, options, file, flag] of cases) {
      await t.step(name, () => {
        const plan = planLaunch(options, DIR);
        assert.ok(!plan.args.join("\n").includes(secret), plan.args.join(" "));
        assert.ok(plan.args.includes(`--${flag}=${DIR}/${file}`), plan.args.join(" "));
        assert.ok(plan.files[file]?.includes(secret), JSON.stringify(plan.files));
      });
    }
    await t.step("a file path is passed as is, nothing written", () => {
      const plan = planLaunch({ settings: "/etc/s.json", agents: "a.json", mcpConfig: "m.json" });
      assert.deepEqual(plan.files, {});
      assert.deepEqual(plan.args.slice(-3), [
        "--mcp-config=m.json",
        "--settings=/etc/s.json",
        "--agents=a.json",
      ]);
    });
    await t.step("the files hold exactly the JSON given", () => {
      const mcp = { mcpServers: { s: { command: "srv", args: ["-v"] } } };
      assert.deepEqual(fileOf({ mcpConfig: mcp }, "mcp.json"), mcp);
      assert.deepEqual(fileOf({ agents: '{"r":{"prompt":"p"}}' }, "agents.json"), {
        r: { prompt: "p" },
      });
    });
  },
});

Deno.test({
  name: "planLaunch() merges sandbox into the settings as the official SDK documents",
  permissions: "none",
  fn: async (t) => {
    const merged = (settings: CliOptions["settings"], sandbox: SandboxSettings) =>
      fileOf({ ...(settings !== undefined && { settings }), sandbox }, "settings.json");
    await t.step("alone: the sandbox block, failIfUnavailable on with enabled", () => {
      assert.deepEqual(merged(undefined, { enabled: true }), {
        sandbox: { enabled: true, failIfUnavailable: true },
      });
      assert.deepEqual(merged(undefined, { enabled: false }), { sandbox: { enabled: false } });
      assert.deepEqual(merged(undefined, { enabled: true, failIfUnavailable: false }), {
        sandbox: { enabled: true, failIfUnavailable: false },
      });
    });
    await t.step("the option's values win, nested objects merge key by key", () => {
      const settings = {
        model: "m",
        sandbox: {
          enabled: false,
          network: { allowLocalBinding: false, allowUnixSockets: ["/a"] },
        },
      };
      assert.deepEqual(
        merged(settings, { enabled: true, network: { allowLocalBinding: true } }),
        {
          model: "m",
          sandbox: {
            enabled: true,
            failIfUnavailable: true,
            network: { allowLocalBinding: true, allowUnixSockets: ["/a"] },
          },
        },
      );
    });
    await t.step("deny lists combine, other lists are replaced", () => {
      const settings = {
        sandbox: { filesystem: { denyRead: ["/a"], allowWrite: ["/w"] } },
      };
      assert.deepEqual(
        merged(settings, { filesystem: { denyRead: ["/b", "/a"], allowWrite: ["/v"] } }),
        { sandbox: { filesystem: { denyRead: ["/a", "/b"], allowWrite: ["/v"] } } },
      );
    });
    await t.step("a settings filesystem.disabled cannot switch off the option's rules", () => {
      const settings = { sandbox: { filesystem: { disabled: true, denyWrite: ["/x"] } } };
      assert.deepEqual(merged(settings, { filesystem: { denyRead: ["/s"] } }), {
        sandbox: { filesystem: { denyWrite: ["/x"], denyRead: ["/s"] } },
      });
      assert.deepEqual(merged(settings, { enabled: true }), {
        sandbox: {
          enabled: true,
          failIfUnavailable: true,
          filesystem: settings.sandbox.filesystem,
        },
      });
    });
    await t.step("the settings' proxy ports go when the option restricts the network", () => {
      const settings = { sandbox: { network: { httpProxyPort: 8080, socksProxyPort: 1080 } } };
      assert.deepEqual(merged(settings, { network: { allowedDomains: ["a.example"] } }), {
        sandbox: { network: { allowedDomains: ["a.example"] } },
      });
      assert.deepEqual(merged(settings, { network: { allowLocalBinding: true } }), {
        sandbox: {
          network: { httpProxyPort: 8080, socksProxyPort: 1080, allowLocalBinding: true },
        },
      });
    });
    await t.step("JSON text settings merge too; the caller's objects are not changed", () => {
      assert.deepEqual(merged('{"sandbox":{"enabled":false}}', { enabled: true }), {
        sandbox: { enabled: true, failIfUnavailable: true },
      });
      const settings = { sandbox: { filesystem: { disabled: true } } };
      const sandbox = { filesystem: { denyRead: ["/s"] }, network: { allowedDomains: ["d"] } };
      const before = JSON.stringify([settings, sandbox]);
      merged(settings, sandbox);
      assert.equal(JSON.stringify([settings, sandbox]), before);
    });
  },
});

Deno.test({
  name: "planLaunch() sets the variables and initialize fields its options need",
  permissions: "none",
  fn: async (t) => {
    await t.step("none by default", () => {
      const plan = planLaunch({});
      assert.deepEqual([plan.env, plan.initialize, plan.files], [{}, {}, {}]);
    });
    await t.step("enableFileCheckpointing", () => {
      assert.deepEqual(planLaunch({ enableFileCheckpointing: true }).env, {
        CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: "true",
      });
      assert.deepEqual(planLaunch({ enableFileCheckpointing: false }).env, {});
    });
    await t.step("toolConfig", () => {
      const plan = planLaunch({ toolConfig: { askUserQuestion: { previewFormat: "html" } } });
      assert.deepEqual(plan.env, { CLAUDE_CODE_QUESTION_PREVIEW_FORMAT: "html" });
      assert.deepEqual(planLaunch({ toolConfig: { askUserQuestion: {} } }).env, {});
    });
    await t.step("skills: a list travels in initialize, all does not", () => {
      assert.deepEqual(planLaunch({ skills: ["pdf", "x:y"] }).initialize, {
        skills: ["pdf", "x:y"],
      });
      assert.deepEqual(planLaunch({ skills: "all" }).initialize, {});
    });
  },
});

Deno.test({
  name: "launchPlan() plans once: argsIn(dir) names the folder as planLaunch(options, dir) does",
  permissions: "none",
  fn: () => {
    const cases: readonly CliOptions[] = [
      {},
      { model: "sonnet", settings: "/etc/s.json", agents: "a.json" },
      {
        model: "sonnet",
        mcpConfig: { mcpServers: { s: { command: "srv" } } },
        settings: { env: { A: "1" } },
        sandbox: { enabled: true },
        agents: { a: { description: "d", prompt: "p" } },
        extraArgs: ["--note=<private dir>/settings.json"],
      },
      { agents: '{"r":{"prompt":"p"}}', mcpConfig: "m.json", maxTurns: 2 },
    ];
    for (const options of cases) {
      const plan = launchPlan(options);
      const { argsIn: _, ...launch } = plan;
      assert.deepEqual(launch, planLaunch(options));
      assert.deepEqual(plan.argsIn(DIR), planLaunch(options, DIR).args);
      assert.deepEqual(plan.argsIn("/tmp/other"), planLaunch(options, "/tmp/other").args);
    }
    assert.throws(() => launchPlan({ settings: {} }).argsIn(""), /privateDir/);
  },
});
