/**
 * How a pool gets a process for a conversation: a resume (`--resume`), a
 * warm spare handed out with the conversation's model and mode, a parked
 * spare claimed for its folder, or a cold start; and how spares start. Every
 * start waits for the CLI's `initialize` answer, bounded.
 *
 * @module
 */

import { abortable, deadline } from "../../../src/_deadline.ts";
import { errorOf, messageOf } from "../../../src/_values.ts";
import { DuplexError, excerptOf, isDuplexError } from "../../../src/errors.ts";
import { DuplexSession } from "../../../src/session/duplex_session.ts";
import { type ClaimOptions, sendClaim } from "../../../src/session/claim.ts";
import type { DuplexSessionOptions } from "../../../src/session/session_options.ts";
import type { PermissionRequest } from "../../../src/permissions/permission.ts";
import type { TransportFactory } from "../../../src/transport/transport.ts";
import { hasFeature, missingFeature } from "../../../src/compat/cli_features.ts";
import type { CliVersion } from "../../../src/compat/cli_versions.ts";
import { launchVersion } from "../_spawn.ts";
import { cwdPath, type SubprocessOptions } from "../subprocess_options.ts";
import type { PoolEvent, SpareKind, StartVia } from "./pool_events.ts";
import type { JsonObject } from "../cli_options.ts";
import {
  type ConversationOptions,
  fitsParkedSpare,
  fitsWarmSpare,
  type PoolSettings,
  type SessionPoolOptions,
} from "./pool_options.ts";
import type { Spare, SpareShelf } from "./_spare_shelf.ts";
import { primer } from "./_primer.ts";

/** What a start needs to know of a conversation. */
export interface Launchable {
  readonly key: string;
  readonly options: ConversationOptions | undefined;
  readonly sessionId: string | undefined;
}

/** What the launcher needs from the pool. */
export interface LauncherDeps {
  readonly shelf: SpareShelf;
  /** Aborted when the pool closes: every start and claim stops. */
  readonly stopping: AbortSignal;
  /** The conversation a session serves. */
  keyOf(session: DuplexSession): string | undefined;
  publish(event: PoolEvent): void;
  count(counter: "claimRefusals" | "handoutFailures"): void;
}

/**
 * How a spare's hand-out went: it `served`; it was `dead` (its process had
 * ended: the next spare may serve); or it `failed` otherwise (refused, too
 * slow: another spare would too, so the conversation starts another way).
 */
type HandOut =
  | { readonly state: "served"; readonly session: DuplexSession }
  | { readonly state: "dead" }
  | { readonly state: "failed" };

const DEAD: HandOut = { state: "dead" };
const FAILED: HandOut = { state: "failed" };

/* What a failed hand-out tells of its spare: dead when its process had ended. */
function endedBy(error: unknown): HandOut {
  return isDuplexError(error, "process_exited") ? DEAD : FAILED;
}

/** Starts a pool's processes. */
export class Launcher {
  readonly #options: SessionPoolOptions;
  readonly #settings: PoolSettings;
  readonly #process: SubprocessOptions;
  readonly #cwd: string | undefined;
  readonly #launch: (options: SubprocessOptions) => TransportFactory;
  readonly #deps: LauncherDeps;
  /** Spares are started by the caller's `launch`, not `subprocess()`: their CLI is not asked. */
  readonly #custom: boolean;
  #parkDir: Promise<string> | undefined;
  /** Why parked spares cannot start (the CLI lacks --await-claim), once known. */
  #parking: Promise<DuplexError | undefined> | undefined;

  /**
   * @param options The pool's options.
   * @param settings The checked settings.
   * @param launch Makes a transport factory (`subprocess`).
   * @param deps What the launcher needs from the pool.
   */
  constructor(
    options: SessionPoolOptions,
    settings: PoolSettings,
    launch: (options: SubprocessOptions) => TransportFactory,
    deps: LauncherDeps,
  ) {
    this.#options = options;
    this.#settings = settings;
    this.#process = options.process ?? {};
    this.#cwd = cwdPath(this.#process.cwd);
    this.#launch = launch;
    this.#custom = options.launch !== undefined;
    this.#deps = deps;
  }

  /**
   * Gets a process for a conversation: a resume, a warm spare, a parked spare
   * claimed for it, or a cold start. A spare found dead at its hand-out (its
   * process ended before the pool heard of it) is closed and the next spare
   * of its kind is tried.
   */
  async open(conversation: Launchable): Promise<{ session: DuplexSession; via: StartVia }> {
    const options = conversation.options ?? {};
    const resume = conversation.sessionId ?? options.resume;
    if (resume !== undefined) {
      return { session: await this.#resume(conversation, resume), via: "resumed" };
    }
    if (fitsWarmSpare(options, this.#cwd)) {
      const session = await this.#fromShelf(
        "warm",
        (spare) => this.#handOut(spare, conversation.key, options),
      );
      if (session) return { session, via: "spare" };
    }
    if (fitsParkedSpare(options)) {
      const claimed = await this.#fromShelf("parked", (spare) => this.#claim(spare, conversation));
      if (claimed) return { session: claimed, via: "parked" };
    }
    return { session: await this.#cold(options), via: "cold" };
  }

  /*
   * Takes spares of a kind until one serves; only a dead one leads to the
   * next (a refusal or a failure would be the same again). Bounded: no spare
   * starts while a conversation does, so each take empties the shelf more.
   */
  async #fromShelf(
    kind: SpareKind,
    use: (spare: Spare) => Promise<HandOut>,
  ): Promise<DuplexSession | undefined> {
    const shelf = this.#deps.shelf;
    for (let spare = shelf.take(kind); spare; spare = shelf.take(kind)) {
      const outcome = await use(spare);
      if (outcome.state === "served") return outcome.session;
      if (outcome.state === "failed" || this.#deps.stopping.aborted) return undefined;
    }
    return undefined;
  }

  /* A spare for the known configuration, with the conversation's model and mode. */
  async #handOut(spare: Spare, key: string, options: ConversationOptions): Promise<HandOut> {
    const session = await this.#ready(spare, key);
    if (!session) return DEAD;
    const mode = options.permissionMode !== undefined &&
        options.permissionMode !== this.#process.permissionMode
      ? options.permissionMode
      : undefined;
    try {
      const asked = await this.#applyModel(session, options);
      if (mode !== undefined) await session.setPermissionMode(mode, this.#controlLimit());
      // An answer proves the process alive now; without one, ask for one.
      if (!asked && mode === undefined) await this.#probe(session);
      return { state: "served", session };
    } catch (error) {
      await session.close();
      this.#failed(spare, key, error);
      return endedBy(error);
    }
  }

  /*
   * Asks the CLI a question every version answers at once (`mcp_status`, about
   * 1 ms): a spare killed a moment ago still looks alive (its exit is seen
   * only once Deno has reaped it, a few event-loop turns later), but it can
   * answer nothing. Any answer, an error too, proves it alive.
   */
  async #probe(session: DuplexSession): Promise<void> {
    await session.request("mcp_status", {}, this.#controlLimit()).catch((error: unknown) => {
      if (!isDuplexError(error, "control_failed")) throw error;
    });
  }

  /* The spare's session once ready and alive; a dead one is reported. */
  async #ready(spare: Spare, key: string): Promise<DuplexSession | undefined> {
    let failure: unknown;
    const session = await spare.ready.catch((error) => {
      failure = error;
      return undefined;
    });
    if (session?.alive) return session;
    if (!this.#deps.stopping.aborted) {
      this.#failed(
        spare,
        key,
        failure ?? new Error("The spare's process ended before its hand-out"),
      );
    }
    return undefined;
  }

  #failed(spare: Spare, key: string, error: unknown): void {
    if (this.#deps.stopping.aborted) return; // the pool is closing: not the spare's failure
    this.#deps.count("handoutFailures");
    this.#deps.publish({
      type: "handout_failed",
      key,
      kind: spare.kind,
      error: errorOf(error),
    });
  }

  /* A parked spare bound to the conversation's folder. */
  async #claim(spare: Spare, conversation: Launchable): Promise<HandOut> {
    const session = await this.#ready(spare, conversation.key);
    if (!session) return DEAD;
    const options = conversation.options ?? {};
    const permissionMode = options.permissionMode ?? this.#process.permissionMode;
    try {
      const claim: ClaimOptions = {
        cwd: options.cwd ?? this.#cwd ?? Deno.cwd(),
        ...(permissionMode === undefined ? {} : { permissionMode }),
        ...(options.additionalDirectories === undefined
          ? {}
          : { additionalDirectories: options.additionalDirectories }),
        ...(options.appendSystemPrompt === undefined
          ? {}
          : { appendSystemPrompt: options.appendSystemPrompt }),
        ...(options.title === undefined ? {} : { title: options.title }),
        ...(options.agents === undefined ? {} : { agents: options.agents }),
      };
      const extras: ClaimOptions = {
        ...claim,
        ...(options.model === undefined || options.model === this.#process.model
          ? {}
          : { model: options.model }),
        ...(options.maxThinkingTokens === undefined
          ? {}
          : { maxThinkingTokens: options.maxThinkingTokens }),
        ...(options.settings === undefined ? {} : { settings: options.settings }),
      };
      // The SDK's sequence (settings ahead of the claim, the model after it), the claim itself
      // through the session's claimSession so that the session takes the claimed id and info.
      const limit = this.#controlLimit();
      await sendClaim(
        extras,
        (subtype, fields) =>
          subtype === "claim_session"
            ? session.claimSession(claim, limit)
            : session.request(subtype, fields, limit),
      );
      return { state: "served", session };
    } catch (error) {
      if (isDuplexError(error, "claim_refused")) {
        this.#deps.count("claimRefusals");
        this.#deps.publish({
          type: "claim_refused",
          key: conversation.key,
          reason: error.errorCode ?? "refused",
          message: error.message,
        });
      } else this.#failed(spare, conversation.key, error);
      await session.close(); // a refused spare stays parked: it is let go
      return endedBy(error);
    }
  }

  /* Sets the conversation's model when it is not the pool's; true if it asked the CLI. */
  async #applyModel(session: DuplexSession, options: ConversationOptions): Promise<boolean> {
    if (options.model === undefined || options.model === this.#process.model) return false;
    await session.setModel(options.model, this.#controlLimit());
    return true;
  }

  #controlLimit(): { timeoutMs: number; signal: AbortSignal } {
    return { timeoutMs: this.#settings.startTimeoutMs, signal: this.#deps.stopping };
  }

  async #cold(options: ConversationOptions, resume?: string): Promise<DuplexSession> {
    const base = this.#process;
    const process: SubprocessOptions = {
      ...base,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.permissionMode === undefined ? {} : { permissionMode: options.permissionMode }),
      ...(options.additionalDirectories === undefined ? {} : {
        additionalDirectories: [
          ...(base.additionalDirectories ?? []),
          ...options.additionalDirectories,
        ],
      }),
      ...(options.title === undefined || resume !== undefined ? {} : { title: options.title }),
      ...(resume === undefined ? {} : { resume }),
      ...coldThinking(options.maxThinkingTokens),
      ...(options.settings === undefined
        ? {}
        : { settings: mergedSettings(base.settings, options.settings) }),
    };
    const shared = this.#options.session ?? {};
    return await this.#startSession(process, this.#deps.stopping, {
      ...(options.appendSystemPrompt === undefined
        ? {}
        : { appendSystemPrompt: options.appendSystemPrompt }),
      ...(options.agents === undefined ? {} : { agents: { ...shared.agents, ...options.agents } }),
    });
  }

  async #resume(conversation: Launchable, sessionId: string): Promise<DuplexSession> {
    try {
      return await this.#cold(conversation.options ?? {}, sessionId);
    } catch (error) {
      if (isDuplexError(error, "timeout") || isDuplexError(error, "closed")) throw error;
      const exit = isDuplexError(error) ? error.exit : undefined;
      const stderr = exit?.stderrTail.trim();
      // The CLI has no transcript of that id (in this config folder and cwd): not_found.
      const unknown = stderr !== undefined && NO_CONVERSATION.test(stderr);
      throw new DuplexError(
        unknown ? "not_found" : "resume_failed",
        `Cannot resume "${conversation.key}" (session ${sessionId}): ` +
          messageOf(error) +
          (stderr ? `; the CLI said: ${excerptOf(stderr)}` : "") +
          "; resume needs session persistence, the same config folder and the same cwd " +
          "(forget the key to start it new)",
        { cause: error, ...(exit ? { exit } : {}) },
      );
    }
  }

  /** Starts a spare of a kind (for the shelf). */
  async openSpare(kind: SpareKind, signal: AbortSignal): Promise<DuplexSession> {
    if (kind === "parked") await this.#requireParking();
    const process = kind === "warm"
      ? this.#process
      : { ...this.#process, cwd: await this.#parkFolder(), awaitClaim: true };
    // A spare being handed out has left the shelf: the pool's close must stop it too.
    return await this.#startSession(
      process,
      AbortSignal.any([signal, this.#deps.stopping]),
      {},
      kind === "warm" && this.#settings.primeSpares,
    );
  }

  /*
   * Starts a session and waits for its `initialize` answer (the CLI ready), bounded; a spare to
   * prime is primed within the same bound (see `_primer.ts`).
   */
  async #startSession(
    process: SubprocessOptions,
    signal: AbortSignal,
    extra: Partial<DuplexSessionOptions>,
    prime = false,
  ): Promise<DuplexSession> {
    const shared = this.#options.session ?? {};
    const holder: { session?: DuplexSession } = {};
    const handler = this.#options.onPermission;
    const transport = prime ? primer(this.#launch(process)) : undefined;
    const session = await DuplexSession.start({
      ...shared,
      ...extra,
      initialize: typeof shared.initialize === "object" ? shared.initialize : true,
      transport: transport?.factory ?? this.#launch(process),
      ...(handler
        ? { onPermission: (request: PermissionRequest) => this.#decide(request, holder.session) }
        : {}),
    });
    holder.session = session;
    const { startTimeoutMs } = this.#settings;
    try {
      using limit = deadline(startTimeoutMs, {
        signal,
        reason: () =>
          new DuplexError("timeout", `The CLI did not get ready within ${startTimeoutMs} ms`),
      });
      await abortable(session.initialized, limit.signal);
      if (transport) await transport.prime(limit.signal);
      return session;
    } catch (error) {
      const status = await session.close();
      const exit = status.state === "running" ? undefined : status.exit;
      if (isDuplexError(error) && !error.exit && exit && !exit.requested) {
        throw new DuplexError(error.kind, error.message, { cause: error, exit });
      }
      throw error;
    }
  }

  #decide(request: PermissionRequest, session: DuplexSession | undefined) {
    const key = session && this.#deps.keyOf(session);
    if (!session || key === undefined) {
      return { behavior: "deny" as const, message: "No conversation holds this session" };
    }
    return this.#options.onPermission!(request, { key, session });
  }

  /*
   * Parked spares need --await-claim: on a CLI known to lack it (its version, asked once per
   * binary; a custom launch is not asked), the shelf keeps warm spares instead, said once.
   */
  async #requireParking(): Promise<void> {
    this.#parking ??= this.#custom
      ? Promise.resolve(undefined)
      : launchVersion(this.#process).then((version) => {
        if (hasFeature("awaitClaim", version) !== false) return undefined;
        const missing = missingFeature("awaitClaim", version as CliVersion);
        this.#deps.publish({
          type: "degraded",
          feature: "awaitClaim",
          message: `${missing.message}; the pool keeps warm spares instead of parked ones`,
        });
        this.#deps.shelf.parkAsWarm();
        return missing;
      }, () => undefined); // no binary: the spare's own start says so
    const missing = await this.#parking;
    if (missing) throw missing;
  }

  #parkFolder(): Promise<string> {
    const given = this.#options.parkDir;
    if (given !== undefined) return Promise.resolve(given);
    return this.#parkDir ??= Deno.makeTempDir({ prefix: "duplex-park-" });
  }

  /** Removes the parking folder the launcher made (not a given `parkDir`). */
  async removeParkFolder(): Promise<void> {
    if (this.#parkDir) await Deno.remove(await this.#parkDir, { recursive: true }).catch(() => {});
  }
}

/** What the CLI says on stderr when `--resume` names a session it has no transcript of. */
const NO_CONVERSATION = /No conversation found with session ID/;

/** A conversation's thinking budget as a cold start's option (0: off; null: the CLI's default). */
function coldThinking(max: number | null | undefined): Pick<SubprocessOptions, "thinking"> {
  if (max === undefined || max === null) return {};
  return { thinking: max === 0 ? { type: "disabled" } : { type: "enabled", budgetTokens: max } };
}

/** A conversation's settings over the pool's (`--settings`): merged, key by key. */
function mergedSettings(
  base: SubprocessOptions["settings"],
  overlay: Readonly<Record<string, unknown>>,
): JsonObject {
  if (base === undefined) return { ...overlay };
  if (typeof base !== "string") return { ...base, ...overlay };
  if (base.trimStart().startsWith("{")) return { ...JSON.parse(base), ...overlay };
  throw new DuplexError(
    "invalid_argument",
    "Cannot start the conversation with its settings: the pool's process.settings is a " +
      "settings file path, which they cannot be merged into; give the pool's settings as an object",
  );
}
