/**
 * The script of `index.html`: one turn of a `claude` that a relay runs, from
 * a browser page, with the Web-standard remote transport (the token travels
 * in the WebSocket subprotocol: a browser cannot set headers on a WebSocket).
 *
 * Build it and serve the folder, then open the page with the relay's address
 * and a token in the fragment (which never reaches the server of the page):
 *
 * ```sh
 * deno bundle --platform browser -o examples/edge/browser/client.js examples/edge/browser/client.ts
 * python3 -m http.server -b 127.0.0.1 -d examples/edge/browser 8000
 * # http://127.0.0.1:8000/#relay=ws://127.0.0.1:8787/v1&token=…&prompt=Say%20hi
 * ```
 *
 * A real page gets a short-lived token from its own server rather than the
 * relay's long-lived one. The outcome is shown on the page and kept in
 * `globalThis.duplexResult` (a promise), which the e2e test reads.
 *
 * @module
 */

import { DuplexSession, isDuplexError } from "@duplex/claude";
import { remote } from "@duplex/claude/remote";

/** What the page ends with. */
export type PageResult =
  | { ok: true; text: string; isError: boolean; sessionId: string | undefined }
  | { ok: false; name: string; kind: string | undefined; message: string };

/**
 * Runs the turn the fragment asks for (`relay`, `token`, `prompt`).
 *
 * @param hash The page's `location.hash`.
 * @returns How it went.
 */
export async function runPage(hash: string): Promise<PageResult> {
  const params = new URLSearchParams(hash.slice(1));
  try {
    const session = await DuplexSession.start({
      transport: remote({ url: params.get("relay") ?? "", token: params.get("token") ?? "" }),
      onPermission: (req) => ({ behavior: "deny", message: `No ${req.toolName} from a browser` }),
    });
    try {
      const turn = await session.send(params.get("prompt") ?? "Say hi from a browser.");
      const { text, isError, sessionId } = turn.result;
      return { ok: true, text, isError, sessionId };
    } finally {
      await session.close();
    }
  } catch (error) {
    return {
      ok: false,
      name: error instanceof Error ? error.name : typeof error,
      kind: isDuplexError(error) ? error.kind : undefined,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}

/** What the script uses of the page (typed here: the package is checked without DOM types). */
interface Page {
  readonly location: { readonly hash: string };
  readonly document: { getElementById(id: string): { textContent: string | null } | null };
  duplexResult?: Promise<PageResult>;
}

const page = globalThis as unknown as Page;
const result = runPage(page.location.hash);
page.duplexResult = result;
result.then((outcome) => {
  const output = page.document.getElementById("output");
  if (output) {
    output.textContent = outcome.ok ? outcome.text : `${outcome.kind}: ${outcome.message}`;
  }
});
