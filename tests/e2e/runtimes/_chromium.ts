/**
 * Headless Chromium (the Debian package) for the browser tests: started as
 * root with nothing talking to the network, its DevTools endpoint read from
 * stderr and connected to, and closed so that none of its processes is left.
 *
 * @module
 */

import { waitUntil } from "../_harness.ts";
import { Cdp } from "./_cdp.ts";
import { Child, processesWith } from "./_processes.ts";

/**
 * The flags of a headless Chromium run as root, with nothing talking to the
 * network, and rendering the same pixels every run (for committed
 * screenshots), on an empty page.
 *
 * @param profile Its `--user-data-dir`, which every one of its processes names.
 * @returns The arguments.
 */
function chromiumArgs(profile: string): string[] {
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-crash-reporter",
    "--hide-scrollbars",
    "--num-raster-threads=1",
    "--disable-partial-raster",
    "--disable-lcd-text",
    "--font-render-hinting=none",
    "--force-color-profile=srgb",
    `--user-data-dir=${profile}`,
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "about:blank",
  ];
}

/** A running headless Chromium and its DevTools connection. */
export class Chromium implements AsyncDisposable {
  /** The browser process (its own process group). */
  readonly child: Child;
  /** The DevTools connection. */
  readonly cdp: Cdp;
  /** Its profile folder, named on the command line of each of its processes. */
  readonly profile: string;

  private constructor(child: Child, cdp: Cdp, profile: string) {
    this.child = child;
    this.cdp = cdp;
    this.profile = profile;
  }

  /**
   * Starts Chromium with `home` as its `HOME` and `<home>/profile` as its
   * profile, and connects to its DevTools endpoint (bounded).
   *
   * @param binary The Chromium binary.
   * @param home A fresh folder (the caller removes it).
   * @returns The browser; disposing of it ends every process of its group.
   */
  static async start(binary: string, home: string): Promise<Chromium> {
    const profile = `${home}/profile`;
    const child = await Child.spawn(binary, {
      args: chromiumArgs(profile),
      env: { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    });
    try {
      const [, endpoint] = await child.waitFor("stderr", /DevTools listening on (ws:\/\/\S+)/);
      return new Chromium(child, await Cdp.connect(endpoint!), profile);
    } catch (error) {
      await child[Symbol.asyncDispose]();
      throw error;
    }
  }

  /**
   * Closes the browser through DevTools, waits for its exit, and waits until
   * none of its processes (the helpers it does not parent: zygotes, crash
   * handler) runs any more.
   *
   * @returns Once every process is gone.
   * @throws {Error} When one is still there after the bound.
   */
  async close(): Promise<void> {
    await this.cdp.send("Browser.close").catch(() => {}); // it may close before it answers
    await this.child.exit(10_000);
    await waitUntil(
      async () => (await processesWith(this.profile)).length === 0,
      "every Chromium process gone",
    );
  }

  /** Closes the DevTools connection, then ends the browser's process group. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.cdp[Symbol.asyncDispose]();
    await this.child[Symbol.asyncDispose]();
  }
}
