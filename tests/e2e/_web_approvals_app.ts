/**
 * The web approvals app as the e2e test runs it: `examples/web_approvals/main.ts`
 * in its own process with the permissions its header names, its printed URL
 * and token, its API, and the refusals its defences must give.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Child } from "./runtimes/_processes.ts";
import { projectPath } from "./runtimes/_runtimes.ts";
import { waitUntil } from "./_harness.ts";

const MAIN = projectPath("examples/web_approvals/main.ts");

/** The running app: its process, where it listens, its token, its CLI's pid. */
export interface App {
  readonly child: Child;
  readonly url: string;
  readonly origin: string;
  readonly token: string;
  readonly cliPid: number | undefined;
}

export async function startApp(args: string[], env: Record<string, string>): Promise<App> {
  // The app runs with another HOME: keep the test's Deno cache, so nothing is compiled again.
  const home = Deno.env.get("HOME");
  const denoDir = Deno.env.get("DENO_DIR") ?? (home && `${home}/.cache/deno`);
  const child = await Child.spawn(Deno.execPath(), {
    args: [
      "run",
      "--config",
      projectPath("deno.json"),
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-read",
      "--allow-run",
      MAIN,
      ...args,
    ],
    env: { NO_COLOR: "1", ...(denoDir && { DENO_DIR: denoDir }), ...env },
    cwd: projectPath("."),
  });
  try {
    const [, url] = await child.waitFor("stdout", /Open (http:\/\/\S+)/, 30_000);
    const { origin, hash } = new URL(url!);
    const pid = /, pid (\d+)/.exec(child.stdout)?.[1];
    const token = new URLSearchParams(hash.slice(1)).get("token") ?? "";
    return { child, url: url!, origin, token, cliPid: pid ? Number(pid) : undefined };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

export async function api(
  app: App,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${app.origin}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${app.token}`, "content-type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const value = await response.json();
  assert.ok(response.ok, `${path}: ${response.status} ${JSON.stringify(value)}`);
  return value;
}

/** The status and JSON error of a request to the app (its body always read). */
async function refusal(
  app: App,
  path: string,
  init: RequestInit = {},
): Promise<[number, string]> {
  const response = await fetch(`${app.origin}${path}`, init);
  const body = await response.text();
  return [response.status, response.ok ? body : JSON.parse(body).error];
}

/** A GET with a `Host` of our choosing (fetch keeps its own), over a raw connection. */
async function getWithHost(app: App, path: string, host: string): Promise<string> {
  const { hostname, port } = new URL(app.origin);
  using conn = await Deno.connect({ hostname, port: Number(port) });
  const request = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n` +
    `Authorization: Bearer ${app.token}\r\nConnection: close\r\n\r\n`;
  await conn.write(new TextEncoder().encode(request));
  const buffer = new Uint8Array(4096);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const read = await Promise.race([
    conn.read(buffer),
    new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 5_000)),
  ]).finally(() => clearTimeout(timer));
  return new TextDecoder().decode(buffer.subarray(0, read ?? 0)).split("\r\n")[0] ?? "";
}

export async function checkDefences(app: App): Promise<void> {
  const post = (body: string, headers: Record<string, string> = {}): RequestInit => ({
    method: "POST",
    body,
    headers: {
      authorization: `Bearer ${app.token}`,
      "content-type": "application/json",
      ...headers,
    },
  });
  const send = JSON.stringify({ prompt: "should never run" });
  assert.deepEqual(await refusal(app, "/events"), [
    401,
    "Cannot serve the request: open the URL the server printed",
  ]);
  assert.equal((await refusal(app, `/events?token=${app.token.slice(1)}x`))[0], 401);
  assert.equal((await refusal(app, "/api/send", { method: "POST", body: send }))[0], 401);
  // A POST takes the token as a header only, never in its URL.
  const inUrl = { method: "POST", body: send, headers: { "content-type": "application/json" } };
  assert.deepEqual(await refusal(app, `/api/send?token=${app.token}`, inUrl), [
    401,
    "Cannot serve the request: open the URL the server printed",
  ]);
  // Another site: its Origin, or the browser's Sec-Fetch-Site, gives it away.
  assert.deepEqual(
    await refusal(app, "/api/send", post(send, { origin: "http://evil.example" })),
    [403, 'Cannot serve origin "http://evil.example"'],
  );
  assert.equal(
    (await refusal(app, "/api/send", post(send, { "sec-fetch-site": "cross-site" })))[0],
    403,
  );
  // A DNS name rebound to 127.0.0.1 keeps its own Host.
  assert.match(await getWithHost(app, "/api/state", "evil.example"), /^HTTP\/1\.1 403/);
  assert.match(await getWithHost(app, "/api/state", new URL(app.origin).host), /^HTTP\/1\.1 200/);
  // What a form could post, bodies too large or not JSON, bad fields.
  assert.equal(
    (await refusal(app, "/api/send", post(send, { "content-type": "text/plain" })))[0],
    415,
  );
  const huge = JSON.stringify({ prompt: "x".repeat(70_000) });
  assert.deepEqual(await refusal(app, "/api/send", post(huge)), [
    413,
    "Cannot read the body: over 65536 bytes",
  ]);
  // The same without a Content-Length (chunked): counted as it comes.
  const chunks = ReadableStream.from([huge.slice(0, 40_000), huge.slice(40_000)])
    .pipeThrough(new TextEncoderStream());
  assert.deepEqual(await refusal(app, "/api/send", { ...post(""), body: chunks }), [
    413,
    "Cannot read the body: over 65536 bytes",
  ]);
  assert.equal((await refusal(app, "/api/send", post("{not json")))[0], 400);
  assert.equal((await refusal(app, "/api/send", post(JSON.stringify({ prompt: " " }))))[0], 400);
  assert.deepEqual(
    await refusal(app, "/api/permission", post(JSON.stringify({ id: "nope", behavior: "allow" }))),
    [409, "Cannot answer: the request is no longer waiting"],
  );
  assert.equal(
    (await refusal(app, "/api/permission", post(JSON.stringify({ id: "x", behavior: "maybe" }))))[
      0
    ],
    400,
  );
  assert.equal((await refusal(app, "/api/send"))[0], 405);
  assert.equal((await refusal(app, "/nothing"))[0], 404);
  assert.deepEqual(await api(app, "/api/state"), { busy: false, pages: 0, pending: [] });
  // The page: no token in it, a policy that forbids framing and requires Trusted Types.
  const page = await fetch(`${app.origin}/`);
  const html = await page.text();
  assert.ok(!html.includes(app.token));
  const policy = page.headers.get("content-security-policy") ?? "";
  assert.match(policy, /require-trusted-types-for 'script'/);
  assert.match(policy, /frame-ancestors 'none'/);
  assert.match(policy, /script-src 'nonce-[\w-]+'/);
  // At most 8 pages at once; one that leaves frees its place.
  const streams = await Promise.all(
    Array.from({ length: 8 }, () => fetch(`${app.origin}/events?token=${app.token}`)),
  );
  assert.deepEqual(await refusal(app, `/events?token=${app.token}`), [
    503,
    "Cannot open more than 8 pages",
  ]);
  await Promise.all(streams.map((response) => response.body?.cancel()));
  await waitUntil(async () => (await api(app, "/api/state")).pages === 0, "the pages gone");
}
