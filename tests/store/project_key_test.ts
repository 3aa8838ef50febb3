/**
 * `projectKeyOf` and `keyOfTranscriptPath`: the official SDK's rules (read
 * in its `sdk.mjs`), checked on the names the SDK 0.3.332 itself derived
 * (`tests/store/sdk_parity_test.ts` compares them live when the SDK is
 * installed) and on the project folder of the transcripts the real CLI
 * wrote (`tests/fixtures/history/`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { keyOfTranscriptPath, projectKeyOf } from "../../src/store/project_key.ts";
import { RECORDED_DIR, RECORDED_FOLDER } from "../adapters/subprocess/_history_fixtures.ts";

Deno.test({
  name: "projectKeyOf() derives the CLI's project folder name",
  permissions: "none",
  fn() {
    // What the SDK's own derivation returned for these paths (listSessions({ dir, sessionStore })).
    assert.equal(projectKeyOf("/home/me/app"), "-home-me-app");
    assert.equal(projectKeyOf("/tmp/x y/ü.z"), "-tmp-x-y---z");
    assert.equal(projectKeyOf(`/${"a".repeat(250)}`), `-${"a".repeat(199)}-feo44x`);
    assert.equal(projectKeyOf(RECORDED_DIR), RECORDED_FOLDER, "the folder the real CLI made");
    // One character outside A-Z a-z 0-9 is one dash, a surrogate pair two (UTF-16 units).
    assert.equal(projectKeyOf("/a_b.c/🦀"), "-a-b-c---");
    assert.equal(projectKeyOf("/".repeat(200)).length, 200, "exactly 200: no hash");
    const long = projectKeyOf(`/${"b".repeat(200)}`);
    assert.match(long, /^-b{199}-[0-9a-z]+$/);
    assert.notEqual(long, projectKeyOf(`/${"b".repeat(201)}`), "the hash tells long paths apart");
    for (const bad of ["", 5, undefined]) {
      assert.throws(() => projectKeyOf(bad as string), TypeError);
    }
  },
});

Deno.test({
  name: "keyOfTranscriptPath() maps transcript paths under <configDir>/projects, refuses others",
  permissions: "none",
  async fn(t) {
    const config = "/home/me/.claude";
    const id = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
    const projects = `${config}/projects`;
    const cases: [string, string, string, unknown][] = [
      ["a main transcript", config, `${projects}/-p/${id}.jsonl`, {
        projectKey: "-p",
        sessionId: id,
      }],
      ["a trailing slash on configDir", `${config}/`, `${projects}/-p/${id}.jsonl`, {
        projectKey: "-p",
        sessionId: id,
      }],
      ["a subagent", config, `${projects}/-p/${id}/subagents/agent-a1.jsonl`, {
        projectKey: "-p",
        sessionId: id,
        subpath: "subagents/agent-a1",
      }],
      ["a nested subagent", config, `${projects}/-p/${id}/subagents/x/agent-b.jsonl`, {
        projectKey: "-p",
        sessionId: id,
        subpath: "subagents/x/agent-b",
      }],
      ["dot segments resolved", `${config}/./`, `${projects}/-q/../-p/./${id}.jsonl`, {
        projectKey: "-p",
        sessionId: id,
      }],
      ["relative, both", ".claude", `.claude/projects/-p/${id}.jsonl`, {
        projectKey: "-p",
        sessionId: id,
      }],
      ["outside projects/", config, `${config}/history.jsonl`, undefined],
      ["another config folder", config, `/home/other/.claude/projects/-p/${id}.jsonl`, undefined],
      ["a prefix that is not a folder", config, `${config}-x/projects/-p/${id}.jsonl`, undefined],
      ["climbing out with ..", config, `${projects}/../../x/-p/${id}.jsonl`, undefined],
      ["climbing above the root", "/c", "/../../c/projects/-p/s.jsonl", undefined],
      ["the projects folder itself", config, `${projects}`, undefined],
      ["a project folder", config, `${projects}/-p.jsonl`, undefined],
      ["not .jsonl", config, `${projects}/-p/${id}.json`, undefined],
      ["a bare .jsonl", config, `${projects}/-p/.jsonl`, undefined],
      ["a file directly in the session folder", config, `${projects}/-p/${id}/x.jsonl`, undefined],
      ["a meta sidecar", config, `${projects}/-p/${id}/subagents/agent-a.meta.json`, undefined],
      ["absolute against relative", ".claude", `/x/.claude/projects/-p/${id}.jsonl`, undefined],
    ];
    for (const [what, dir, file, expected] of cases) {
      await t.step(what, () => assert.deepEqual(keyOfTranscriptPath(dir, file), expected));
    }
    assert.throws(() => keyOfTranscriptPath("", "/x"), TypeError);
    assert.throws(() => keyOfTranscriptPath(config, 3 as unknown as string), TypeError);
  },
});
