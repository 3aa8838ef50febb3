/**
 * Releases: the publish workflow runs on version tags with the OIDC token
 * (provenance on the registry's page) and the Deno that CI pins, and the
 * package holds every file the README and docs/ link to (the registry renders
 * the README: a link to an excluded file is broken there).
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);

async function text(path: string): Promise<string> {
  return await Deno.readTextFile(new URL(path, root));
}

Deno.test("the publish workflow publishes a v* tag with OIDC and the Deno CI pins", {
  permissions: { read: ["."] },
}, async () => {
  const workflow = await text(".github/workflows/publish.yml");
  const pinned = /^DENO_VERSION=(\S+)$/m.exec(await text(".ci/run"))?.[1];
  assert.ok(pinned, ".ci/run pins a Deno version");
  assert.match(workflow, /^on:\n {2}push:\n {4}tags: \["v\*"\]$/m);
  assert.match(workflow, /^ {6}id-token: write$/m);
  assert.match(workflow, new RegExp(`^ {6}DENO_VERSION: ${pinned.replaceAll(".", "\\.")}$`, "m"));
  assert.match(workflow, /npx -y "deno@\$\{DENO_VERSION\}" publish$/m);
  assert.match(workflow, /require\("\.\/deno\.json"\)\.version/, "the tag is checked against it");
});

Deno.test("the package holds every file README.md and docs/ link to", {
  permissions: { read: ["."] },
}, async () => {
  const config = JSON.parse(await text("deno.json"));
  const excluded: string[] = config.publish.exclude;
  const pages = ["README.md"];
  for await (const entry of Deno.readDir(new URL("docs/", root))) {
    if (entry.isFile && entry.name.endsWith(".md")) pages.push(`docs/${entry.name}`);
  }
  const linked = new Set<string>();
  for (const page of pages) {
    const base = new URL(page, root);
    for (const [, target] of (await text(page)).matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue; // https:, mailto:
      linked.add(new URL(target!, base).pathname.slice(root.pathname.length));
    }
  }
  assert.ok(linked.has("BENCHMARKS.md"), "the README links to the benchmarks");
  const outside = [...linked].filter((path) =>
    excluded.some((prefix) => path === prefix || path.startsWith(prefix.replace(/\/?$/, "/")))
  );
  assert.deepEqual(outside, [], `linked but excluded from the package: ${outside.join(", ")}`);
});

Deno.test("every deno.json export is doc-linted and its module doc has an example that runs", {
  permissions: { read: ["."] },
}, async () => {
  const config = JSON.parse(await text("deno.json"));
  const exports: Record<string, string> = config.exports;
  const linted = new Set((config.tasks["doc:lint"] as string).split(/\s+/).slice(3));
  const unlinted: string[] = [];
  const without: string[] = [];
  for (const [entry, file] of Object.entries(exports)) {
    const path = file.replace(/^\.\//, "");
    if (!linted.has(path)) unlinted.push(`${entry} (${path})`);
    const source = await text(path);
    const doc = /\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? "";
    assert.match(doc, /@module/, `${path}: the first doc comment is the module doc`);
    // A fence right after an @example line, not marked `ignore` (deno test --doc runs it).
    if (!/@example[^\n]*\n\s*\* ```ts(?![^\n]*\bignore\b)/.test(doc)) without.push(entry);
  }
  assert.deepEqual(unlinted, [], "exports missing from the doc:lint task");
  assert.deepEqual(without, [], "entries whose module doc has no example that runs");
});
