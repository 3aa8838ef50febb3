/**
 * The server of the `useChat` example: `chatHandler` on `/api/chat`, the
 * page's HTML on `/` and its bundle on `/page.js`. Everything else is 404.
 *
 * @module
 */

import { chatHandler, type ChatSessions } from "@duplex/claude/ai-sdk";

const STYLE =
  `body{font:15px/1.4 system-ui,sans-serif;max-width:720px;margin:24px auto;padding:0 16px}
.message{margin:8px 0;padding:8px 12px;border-radius:8px}.user{background:#e8f0fe}
.assistant{background:#f4f4f4}.text{margin:4px 0;white-space:pre-wrap}
.tool{margin:6px 0;padding:6px 8px;border:1px solid #ccc;border-radius:6px;background:#fff}
.tool button{margin-left:8px}.tool pre{margin:4px 0 0;white-space:pre-wrap}
.approval-requested{border-color:#e0a000}.output-denied{border-color:#c33}
.error{color:#c33}form{display:flex;gap:8px;margin-top:16px}#prompt{flex:1;padding:6px}`;

const HTML = `<!doctype html><html><head><meta charset="utf-8"><title>claude · useChat</title>
<style>${STYLE}</style></head><body><div id="root"></div>
<script type="module" src="/page.js"></script></body></html>`;

/**
 * The request handler of the example.
 *
 * @param chats The chats (a warm CLI per chat id).
 * @param script The page's bundle (see `bundle.ts`).
 * @returns A handler for `Deno.serve`.
 */
export function chatApp(
  chats: ChatSessions,
  script: string,
): (request: Request) => Promise<Response> {
  const chat = chatHandler(chats, { maxBodyBytes: 256 * 1024 });
  return async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === "/api/chat") return await chat(request);
    if (request.method !== "GET") return new Response("Not found", { status: 404 });
    if (pathname === "/") return page(HTML, "text/html");
    if (pathname === "/page.js") return page(script, "text/javascript");
    return new Response("Not found", { status: 404 });
  };
}

function page(body: string, type: string): Response {
  return new Response(body, {
    headers: { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store" },
  });
}
