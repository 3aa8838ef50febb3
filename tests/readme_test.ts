/**
 * The README's examples are the programs in examples/ (type-checked with the
 * package, run against the real CLI by the e2e suite): each block marked
 * `<!-- example: examples/x.ts -->` must be that file, word for word.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);

Deno.test("README example blocks are the files in examples/", {
  permissions: { read: ["."] },
}, async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n\n```ts ignore\n([\s\S]*?)\n```/g)];
  assert.ok(blocks.length >= 5, `found ${blocks.length} example blocks`);
  for (const [, path, code] of blocks) {
    const file = await Deno.readTextFile(new URL(path!, root));
    assert.equal(code, file.trimEnd(), `README block for ${path} differs from the file`);
  }
});

Deno.test("README names the pinned Deno version in both commands, as .ci/run does", {
  permissions: { read: ["."] },
}, async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const ci = await Deno.readTextFile(new URL(".ci/run", root));
  assert.match(readme, /npx -y deno@2\.9\.6 task demo/);
  assert.match(readme, /npx -y deno@2\.9\.6 task test/);
  assert.match(ci, /DENO_VERSION=2\.9\.6/);
  assert.match(ci, /deno task test\b/);
});

Deno.test("every examples/, docs/ and tests/ path the README and the examples name exists", {
  permissions: { read: ["."] },
}, async () => {
  const texts = [await Deno.readTextFile(new URL("README.md", root))];
  for await (const entry of Deno.readDir(new URL("examples/", root))) {
    if (entry.isFile && entry.name.endsWith(".ts")) {
      texts.push(await Deno.readTextFile(new URL(`examples/${entry.name}`, root)));
    }
  }
  const named = new Set<string>();
  for (const text of texts) {
    // Not inside a URL (`…/docs/x`), not a glob (`x_*`), not a file the snippet itself creates.
    for (const [token] of text.matchAll(/(?<![\w/.])(?:examples|docs|tests)\/[\w./*-]*/g)) {
      const path = token.replace(/[./]+$/, "");
      if (path.includes("*") || text.includes(`Deno.create("${path}")`)) continue;
      named.add(path);
    }
  }
  assert.ok(named.size > 10, `found ${named.size} paths`);
  const missing: string[] = [];
  for (const path of named) {
    try {
      await Deno.stat(new URL(path, root));
    } catch {
      missing.push(path);
    }
  }
  assert.deepEqual(missing, [], `paths named that do not exist: ${missing.join(", ")}`);
});
