/**
 * The core must run on any Web-standard runtime: `deno task check:core`
 * type-checks it without Deno's types, and this test catches what a type
 * check cannot (a `/// <reference lib="deno.ns" />`, `globalThis.Deno`).
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);

async function* sourceFiles(dir: URL): AsyncGenerator<URL> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* sourceFiles(url);
    else if (entry.name.endsWith(".ts")) yield url;
  }
}

Deno.test("src/, mod.ts and the remote adapter use no Deno API", {
  permissions: { read: ["."] },
}, async () => {
  const offenders: string[] = [];
  const files = [new URL("mod.ts", root)];
  for await (const file of sourceFiles(new URL("src/", root))) files.push(file);
  for await (const file of sourceFiles(new URL("adapters/remote/", root))) files.push(file);
  assert.ok(files.length > 10, "the scan found the core's files");
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    text.split("\n").forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "");
      if (/\bDeno\b/.test(code) && !/^\s*\*/.test(line) || /lib=["']deno/.test(line)) {
        offenders.push(`${file.pathname.slice(root.pathname.length)}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(offenders, []);
});

Deno.test("core and remote adapter files declare that they are browser compatible", {
  permissions: { read: ["."] },
}, async () => {
  const missing: string[] = [];
  const files: URL[] = [];
  for await (const file of sourceFiles(new URL("src/", root))) files.push(file);
  for await (const file of sourceFiles(new URL("adapters/remote/", root))) files.push(file);
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    if (!text.startsWith("// This module is browser compatible.")) {
      missing.push(file.pathname.slice(root.pathname.length));
    }
  }
  assert.deepEqual(missing, []);
});
