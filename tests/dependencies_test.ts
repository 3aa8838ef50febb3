/**
 * The dev-only npm packages deno.json pins resolve as a set the packages
 * themselves accept: Deno prints no peer-dependency warning for any of them
 * (it did for `@opentelemetry/api@1.10.0` beside `sdk-trace-base@2.12.1`, whose
 * peer range ends below 1.10).
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);

Deno.test("deno info prints no peer-dependency warning for any npm package deno.json pins", {
  permissions: { read: ["."], run: true, env: true },
}, async (t) => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const pinned = Object.entries(config.imports as Record<string, string>)
    .filter(([, target]) => target.startsWith("npm:"));
  assert.ok(pinned.length >= 4, `found ${pinned.length} npm imports`);
  for (const [name, target] of pinned) {
    await t.step(`${name} (${target})`, async () => {
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["info", name],
        cwd: root,
        env: { NO_COLOR: "1" },
        stdin: "null",
      }).output();
      const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
      assert.equal(code, 0, text);
      assert.doesNotMatch(text, /peer dependency/i, text);
      assert.match(text, new RegExp(`npm:/${name.replace("/", "\\/")}@`), text);
    });
  }
});
