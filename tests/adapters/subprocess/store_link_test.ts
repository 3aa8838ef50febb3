/** The subprocess side of a session store: the child's configuration folder and path keys. */

import assert from "node:assert/strict";
import { childConfigDir, mirrorTargetOf } from "../../../adapters/subprocess/_store_link.ts";
import { InMemorySessionStore } from "../../../mod.ts";

Deno.test("childConfigDir is the child's folder, resolved against the child's cwd", () => {
  assert.equal(childConfigDir({ CLAUDE_CONFIG_DIR: "/etc/claude/" }, "/w"), "/etc/claude");
  assert.equal(childConfigDir({ HOME: "/home/me" }, "/w"), "/home/me/.claude");
  assert.equal(
    childConfigDir({ CLAUDE_CONFIG_DIR: "cfg", HOME: "/h" }, "/srv/app"),
    "/srv/app/cfg",
  );
  assert.equal(childConfigDir({ CLAUDE_CONFIG_DIR: "../cfg" }, "/srv/app"), "/srv/cfg");
  assert.equal(childConfigDir({ CLAUDE_CONFIG_DIR: "  " }, "/w"), undefined);
  assert.equal(childConfigDir({}, "/w"), undefined);
});

Deno.test("a mirror target maps the CLI's transcript paths to keys, its projectKey first", () => {
  const store = new InMemorySessionStore();
  const id = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
  const target = mirrorTargetOf({ sessionStore: store }, "/srv/app/cfg")!;
  assert.deepEqual(target.keyOf(`/srv/app/cfg/projects/-srv-app/${id}.jsonl`), {
    projectKey: "-srv-app",
    sessionId: id,
  });
  assert.equal(target.keyOf(`/elsewhere/projects/-srv-app/${id}.jsonl`), undefined);
  const tenant = mirrorTargetOf({ sessionStore: store, projectKey: "tenant-1" }, "/srv/app/cfg")!;
  assert.equal(tenant.keyOf(`/srv/app/cfg/projects/-srv-app/${id}.jsonl`)?.projectKey, "tenant-1");
  assert.equal(mirrorTargetOf({}, "/srv/app/cfg"), undefined, "no store, no target");
});
