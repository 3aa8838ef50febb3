/**
 * One browser tab driven as a person would, over the DevTools connection of
 * `runtimes/_cdp.ts`: real mouse clicks at an element's centre, typed text,
 * the Enter key, JavaScript read-outs polled until true, screenshots. Every
 * wait is bounded.
 *
 * @module
 */

import type { Cdp } from "./runtimes/_cdp.ts";

/** Options of {@linkcode Tab.open}. */
export interface TabOptions {
  /** The viewport's width in CSS pixels. @default {960} */
  readonly width?: number;
  /** The viewport's height in CSS pixels. @default {760} */
  readonly height?: number;
  /** A bound on loading the page. @default {15000} */
  readonly timeoutMs?: number;
}

/** A page in its own tab. */
export class Tab {
  readonly #cdp: Cdp;
  readonly #targetId: string;
  readonly #sessionId: string;

  /**
   * Takes over an attached tab (use {@linkcode Tab.open}).
   *
   * @param cdp The browser.
   * @param targetId The tab's target.
   * @param sessionId Its flattened DevTools session.
   */
  constructor(cdp: Cdp, targetId: string, sessionId: string) {
    this.#cdp = cdp;
    this.#targetId = targetId;
    this.#sessionId = sessionId;
  }

  /**
   * Opens `url` in a new tab and waits until it has loaded.
   *
   * @param cdp The browser.
   * @param url The page.
   * @param options Viewport and bound.
   * @returns The tab.
   */
  static async open(cdp: Cdp, url: string, options: TabOptions = {}): Promise<Tab> {
    const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
    const attached = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
    const tab = new Tab(cdp, String(targetId), String(attached.sessionId));
    await cdp.send("Target.activateTarget", { targetId });
    await tab.#send("Emulation.setDeviceMetricsOverride", {
      width: options.width ?? 960,
      height: options.height ?? 760,
      deviceScaleFactor: 1,
      mobile: false,
    });
    await tab.#send("Page.navigate", { url });
    await tab.waitFor(
      `document.readyState === "complete" && location.href === ${JSON.stringify(url)}`,
      `${url} loaded`,
      options.timeoutMs,
    );
    return tab;
  }

  #send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.#cdp.send(method, params, { sessionId: this.#sessionId });
  }

  /**
   * Evaluates `expression` in the page (awaiting a promise it returns).
   *
   * @param expression JavaScript.
   * @returns Its value, by JSON.
   * @throws {Error} With the page's exception when it threw.
   */
  async evaluate(expression: string): Promise<unknown> {
    const evaluated = await this.#send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    const thrown = evaluated.exceptionDetails as
      | { exception?: { description?: string } }
      | undefined;
    if (thrown) {
      throw new Error(`The page threw: ${thrown.exception?.description ?? JSON.stringify(thrown)}`);
    }
    return (evaluated.result as { value?: unknown }).value;
  }

  /**
   * Polls `expression` until its value is truthy (bounded); evaluation errors
   * while the page loads count as not yet.
   *
   * @param expression JavaScript.
   * @param what What is awaited, for the error.
   * @param timeoutMs The bound.
   * @returns The truthy value.
   * @throws {Error} "Cannot see <what>" with the last value or error when time is up.
   */
  async waitFor(expression: string, what: string, timeoutMs = 15_000): Promise<unknown> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      try {
        last = await this.evaluate(expression);
        if (last) return last;
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) {
        const seen = last instanceof Error ? last.message : JSON.stringify(last);
        const text = await this.evaluate("document.body?.innerText ?? ''").catch(() => "");
        throw new Error(`Cannot see ${what} within ${timeoutMs} ms (last: ${seen}); page: ${text}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Clicks the centre of the first element matching `selector` with the
   * mouse (moved, pressed, released), after scrolling it into view.
   *
   * @param selector A CSS selector.
   * @throws {Error} When no element matches.
   */
  async click(selector: string): Promise<void> {
    const at = await this.evaluate(`(() => {
      const element = document.querySelector(${JSON.stringify(selector)});
      if (!element) return null;
      element.scrollIntoView({ block: "center" });
      const box = element.getBoundingClientRect();
      return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    })()`) as { x: number; y: number } | null;
    if (!at) throw new Error(`Cannot click ${selector}: no such element`);
    for (const type of ["mouseMoved", "mousePressed", "mouseReleased"]) {
      await this.#send("Input.dispatchMouseEvent", {
        type,
        x: at.x,
        y: at.y,
        button: "left",
        buttons: type === "mousePressed" ? 1 : 0,
        clickCount: 1,
      });
    }
  }

  /**
   * Types `text` into the focused element.
   *
   * @param text The text.
   */
  async type(text: string): Promise<void> {
    await this.#send("Input.insertText", { text });
  }

  /** Presses and releases Enter. */
  async pressEnter(): Promise<void> {
    const key = {
      key: "Enter",
      code: "Enter",
      windowsVirtualKeyCode: 13,
      nativeVirtualKeyCode: 13,
    };
    await this.#send("Input.dispatchKeyEvent", { type: "keyDown", text: "\r", ...key });
    await this.#send("Input.dispatchKeyEvent", { type: "keyUp", ...key });
  }

  /**
   * Captures the viewport.
   *
   * @returns A PNG.
   */
  async screenshot(): Promise<Uint8Array> {
    const { data } = await this.#send("Page.captureScreenshot", { format: "png" });
    return Uint8Array.from(atob(String(data)), (c) => c.charCodeAt(0));
  }

  /** Closes the tab (its page's connections end with it). */
  async close(): Promise<void> {
    await this.#cdp.send("Target.closeTarget", { targetId: this.#targetId });
  }
}
