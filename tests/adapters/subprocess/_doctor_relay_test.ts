/**
 * `doctor()`'s relay lines against a relay the test serves (`serveRelay`):
 * reachable or not, not a relay, the token refused or accepted, an origin
 * refused or accepted; the token never printed.
 */

import assert from "node:assert/strict";
import { doctor, formatDoctorReport } from "../../../adapters/subprocess/doctor.ts";
import { serveRelay } from "../../../adapters/relay/mod.ts";
import { CLI_WINDOW } from "../../../src/compat/cli_versions.ts";
import { assertLine, claudeOfVersion, makeTestDir } from "./_doctor_fixtures.ts";

const TOKEN = "a-long-random-static-token-for-the-doctor-test";

Deno.test("doctor() relay: reachable, the token refused or accepted, an origin refused or accepted", async (t) => {
  const dir = await makeTestDir();
  await using relay = serveRelay({
    tokens: [TOKEN],
    workspace: dir,
    allowedOrigins: ["https://app.example"],
  });
  try {
    const binary = await claudeOfVersion(dir, CLI_WINDOW.newest);
    const base = { binary, cwd: dir, env: { HOME: `${dir}/home`, TMPDIR: dir, PATH: dir } };
    await t.step("a wrong token", async () => {
      const report = await doctor({ ...base, relay: { url: relay.url, token: "wrong-token-xyz" } });
      assertLine(report, "relay", "ok", /\/health answers \(ok, 0 sessions\)/);
      assertLine(
        report,
        "relay-token",
        "fail",
        /refuses the token \(unauthorized\)/,
        /static tokens/,
      );
      assert.ok(!formatDoctorReport(report).includes("wrong-token-xyz"), "the token is not shown");
      assert.equal(report.ok, false);
    });
    await t.step("the right token", async () => {
      const report = await doctor({ ...base, relay: { url: relay.url, token: TOKEN } });
      assertLine(report, "relay-token", "ok", /accepts the token/);
      assert.ok(!JSON.stringify(report).includes(TOKEN), "the token is not shown");
    });
    await t.step("an origin the relay does not allow, and one it does", async () => {
      const refused = await doctor({
        ...base,
        relay: { url: relay.url, token: TOKEN, origin: "https://evil.example" },
      });
      assertLine(
        refused,
        "relay-origin",
        "fail",
        /refuses a browser from https:\/\/evil\.example/,
        /allowedOrigins/,
      );
      const allowed = await doctor({
        ...base,
        relay: { url: relay.url, token: TOKEN, origin: "https://app.example" },
      });
      assertLine(allowed, "relay-origin", "ok", /accepts a browser from https:\/\/app\.example/);
    });
    await t.step("nothing listens there", async () => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (listener.addr as Deno.NetAddr).port;
      listener.close();
      const report = await doctor({
        ...base,
        relay: { url: `ws://127.0.0.1:${port}/v1`, token: TOKEN },
      });
      assertLine(report, "relay", "fail", /unreachable/, /relay runs there/);
      assert.ok(!report.checks.some((check) => check.check === "relay-token"), "not asked");
    });
    await t.step("not a relay", async () => {
      await using server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        () => new Response("nope", { status: 404 }),
      );
      const url = `ws://127.0.0.1:${server.addr.port}/v1`;
      const report = await doctor({ ...base, relay: { url, token: TOKEN } });
      assertLine(report, "relay", "fail", /answered HTTP 404, not a relay's health/);
    });
    await t.step(
      "a relay shutting down, one that refuses upgrades without a reason, one that hangs",
      async () => {
        const { promise: release, resolve } = Promise.withResolvers<Response>();
        await using server = Deno.serve(
          { hostname: "127.0.0.1", port: 0, onListen() {} },
          (request) => {
            const path = new URL(request.url).pathname;
            if (path === "/closing/health") return Response.json({ ok: false, sessions: 0 });
            if (path.endsWith("/health")) return Response.json({ ok: true, sessions: 1 });
            if (path === "/hang/v1") return release;
            return new Response("broken", { status: 500 });
          },
        );
        try {
          const at = `ws://127.0.0.1:${server.addr.port}`;
          const closing = await doctor({
            ...base,
            relay: { url: `${at}/closing/v1`, token: TOKEN },
          });
          assertLine(closing, "relay", "fail", /the relay is shutting down/, /restarted/);
          const broken = await doctor({ ...base, relay: { url: `${at}/v1`, token: TOKEN } });
          assertLine(broken, "relay", "ok", /answers \(ok, 1 sessions\)/);
          assertLine(broken, "relay-token", "fail", /gave no reason/, /proxy/);
          const hang = await doctor({
            ...base,
            relay: { url: `${at}/hang/v1`, token: TOKEN },
            timeoutMs: 500,
          });
          assertLine(hang, "relay-token", "fail", /did not answer within 500 ms/, /proxy/);
        } finally {
          resolve(new Response("late", { status: 500 }));
          // The doctor's socket, closed while in its handshake, ends with that answer.
          await new Promise((done) => setTimeout(done, 300));
        }
      },
    );
    await t.step("not a WebSocket URL", async () => {
      const report = await doctor({
        ...base,
        relay: { url: "http://127.0.0.1:1/v1", token: TOKEN },
      });
      assertLine(report, "relay", "fail", /is not a relay URL/, /ws:\/\/host:port\/v1/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
