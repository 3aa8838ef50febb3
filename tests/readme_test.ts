/**
 * The examples of the README and of docs/*.md are the programs in examples/
 * (type-checked with the package, run against the real CLI by the e2e
 * suite): each block marked `<!-- example: examples/x.ts -->` must be that
 * file, word for word.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);

/** README.md and every docs/*.md, by their paths from the repository's root. */
async function pages(): Promise<Map<string, string>> {
  const found = new Map([["README.md", await Deno.readTextFile(new URL("README.md", root))]]);
  const docs: string[] = [];
  for await (const entry of Deno.readDir(new URL("docs/", root))) {
    if (entry.isFile && entry.name.endsWith(".md")) docs.push(`docs/${entry.name}`);
  }
  for (const path of docs.sort()) found.set(path, await Deno.readTextFile(new URL(path, root)));
  return found;
}

Deno.test("the example blocks of README.md and docs/*.md are the files in examples/", {
  permissions: { read: ["."] },
}, async () => {
  let count = 0;
  for (const [page, text] of await pages()) {
    const blocks = text.matchAll(/<!-- example: (\S+) -->\n\n```ts ignore\n([\s\S]*?)\n```/g);
    for (const [, path, code] of blocks) {
      const file = await Deno.readTextFile(new URL(path!, root));
      assert.equal(code, file.trimEnd(), `${page}: the block for ${path} differs from the file`);
      count++;
    }
  }
  assert.ok(count >= 6, `found ${count} example blocks`);
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

Deno.test("every examples/, docs/ and tests/ path the pages and the examples name exists", {
  permissions: { read: ["."] },
}, async () => {
  const texts = [...(await pages()).values()];
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
