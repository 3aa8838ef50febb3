/**
 * The transport conformance suite against the subprocess adapter, with a
 * real process on the other side: `tests/fixtures/conformance_peer.ts` run by
 * the `deno` binary without permissions.
 */

import { subprocess } from "../../../adapters/subprocess/mod.ts";
import { runTransportConformance } from "../../../src/testing/transport_conformance.ts";

const PEER = decodeURIComponent(
  new URL("../../fixtures/conformance_peer.ts", import.meta.url).pathname,
);

Deno.test("the subprocess transport passes the transport conformance suite", async (t) => {
  const open = subprocess({
    binary: Deno.execPath(),
    // The peer needs no permissions; the CLI flags the adapter appends are ignored.
    binaryArgs: ["run", "--no-config", "--quiet", "--no-prompt", PEER],
    permissionPromptTool: false,
    closeGraceMs: 2000,
    terminateGraceMs: 2000,
  });
  await runTransportConformance(t, async () => ({
    transport: await open({ signal: new AbortController().signal }),
  }));
});
