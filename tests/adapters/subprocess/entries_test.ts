/**
 * The entries of the subprocess adapter: `@duplex/claude/pool` holds the
 * pool, `@duplex/claude/history` the history functions and the directory
 * store, and `@duplex/claude/subprocess` still exports each of their values
 * (deprecated, through 0.3) as the very same value, so that 0.2's imports
 * keep working.
 *
 * @module
 */

import assert from "node:assert/strict";
import * as history from "../../../adapters/subprocess/history/mod.ts";
import * as pool from "../../../adapters/subprocess/pool/mod.ts";
import * as subprocess from "../../../adapters/subprocess/mod.ts";

Deno.test("the old subprocess path exports every value of the history entry, the same value", {
  permissions: "none",
}, () => {
  const names = [
    "DirectorySessionStore",
    "deleteSession",
    "forkSession",
    "getSessionInfo",
    "getSessionMessages",
    "importSessionToStore",
    "listSessions",
    "materializeSession",
    "renameSession",
    "tagSession",
  ];
  // Added in 0.3 (issue 24): in the history entry only, the old path never had them.
  const added = [
    "archiveSession",
    "foldSessionSummary",
    "getSubagentMessages",
    "listSubagents",
    "unarchiveSession",
  ];
  assert.deepEqual(Object.keys(history).sort(), [...names, ...added].sort());
  const old = subprocess as Record<string, unknown>;
  for (const name of names) {
    assert.equal(old[name], (history as Record<string, unknown>)[name], name);
  }
});

Deno.test("the old subprocess path exports the pool, the same class", {
  permissions: "none",
}, () => {
  assert.deepEqual(Object.keys(pool), ["SessionPool"]);
  assert.equal(subprocess.SessionPool, pool.SessionPool);
});

Deno.test("the subprocess entry keeps the transport, the argument builder and binary resolution", {
  permissions: "none",
}, () => {
  for (const name of ["subprocess", "buildArgs", "planLaunch", "resolveBinary", "STRIPPED_ENV"]) {
    assert.ok(name in subprocess, name);
  }
});
