import assert from "node:assert/strict";
import {
  type Conversation,
  disarmIdle,
  NEW,
  type Phase,
  type Resting,
  sessionIdOf,
  tally,
  viewOf,
} from "../../../../adapters/subprocess/pool/_conversation.ts";
import type { ConversationOptions } from "../../../../adapters/subprocess/pool/pool_options.ts";
import type { DuplexSession } from "../../../../src/session/duplex_session.ts";

/** What the state functions read of a session. */
function session(sessionId: string | undefined, busy = false, pending = 0): DuplexSession {
  return { sessionId, busy, pendingPermissions: new Array(pending) } as unknown as DuplexSession;
}

function conversation(state: Phase, options?: ConversationOptions, holds = 0): Conversation {
  return { key: "k", options, holds, state };
}

const started = Promise.withResolvers<DuplexSession>().promise;
const hibernated: Resting = { phase: "hibernated", sessionId: "s1" };
const live = (s: DuplexSession): Phase => ({
  phase: "live",
  session: s,
  sessionId: "s1",
  idleTimer: undefined,
});

Deno.test("sessionIdOf() and viewOf(): what peek tells of each state", () => {
  const rows: [string, Conversation, ReturnType<typeof viewOf>][] = [
    ["new", conversation(NEW), {
      state: "hibernated",
      sessionId: undefined,
      holds: 0,
      busy: false,
    }],
    ["new, starting", conversation({ phase: "starting", started, from: NEW }, undefined, 1), {
      state: "starting",
      sessionId: undefined,
      holds: 1,
      busy: false,
    }],
    ["hibernated, resuming", conversation({ phase: "starting", started, from: hibernated }), {
      state: "starting",
      sessionId: "s1",
      holds: 0,
      busy: false,
    }],
    ["live, its process's id not told yet", conversation(live(session(undefined))), {
      state: "live",
      sessionId: "s1",
      holds: 0,
      busy: false,
    }],
    ["live, its process's own id", conversation(live(session("s2", true)), undefined, 2), {
      state: "live",
      sessionId: "s2",
      holds: 2,
      busy: true,
    }],
    ["live, a permission waiting", conversation(live(session("s2", false, 1))), {
      state: "live",
      sessionId: "s2",
      holds: 0,
      busy: true,
    }],
    ["hibernated", conversation(hibernated), {
      state: "hibernated",
      sessionId: "s1",
      holds: 0,
      busy: false,
    }],
  ];
  for (const [name, c, view] of rows) {
    assert.deepEqual(viewOf(c), view, name);
    assert.equal(sessionIdOf(c.state), view.sessionId, name);
  }
});

Deno.test("tally() counts busy, starting and hibernated; a new conversation counts only with a resume id", () => {
  const counts = tally([
    conversation(NEW),
    conversation(NEW, { resume: "s9" }),
    conversation({ phase: "starting", started, from: hibernated }),
    conversation(live(session("a", true))),
    conversation(live(session("b"))),
    conversation(hibernated),
  ]);
  assert.deepEqual(counts, { busy: 1, starting: 1, hibernated: 2 });
});

Deno.test("disarmIdle() stops a live state's idle timer and leaves other states alone", () => {
  let fired = false;
  const state = live(session("a"));
  assert.equal(state.phase, "live");
  if (state.phase !== "live") return;
  state.idleTimer = setTimeout(() => fired = true, 0);
  disarmIdle(state);
  assert.equal(state.idleTimer, undefined);
  disarmIdle(NEW);
  disarmIdle(hibernated);
  return new Promise((resolve) =>
    setTimeout(() => {
      assert.equal(fired, false);
      resolve();
    }, 5)
  );
});
