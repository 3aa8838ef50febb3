/**
 * The names `@duplex/claude/subprocess` exported before the pool and the
 * history got entries of their own (`@duplex/claude/pool`,
 * `@duplex/claude/history`): each the same value or type, marked
 * deprecated, so that 0.2's imports keep working through 0.3. They go in
 * 0.4 (see `docs/upgrading.md`).
 *
 * @module
 */

import * as history from "./history/mod.ts";
import * as pool from "./pool/mod.ts";

/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const listSessions: typeof history.listSessions = history.listSessions;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const getSessionInfo: typeof history.getSessionInfo = history.getSessionInfo;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const getSessionMessages: typeof history.getSessionMessages = history.getSessionMessages;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const renameSession: typeof history.renameSession = history.renameSession;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const tagSession: typeof history.tagSession = history.tagSession;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const deleteSession: typeof history.deleteSession = history.deleteSession;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const forkSession: typeof history.forkSession = history.forkSession;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const importSessionToStore: typeof history.importSessionToStore =
  history.importSessionToStore;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const materializeSession: typeof history.materializeSession = history.materializeSession;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export const DirectorySessionStore: typeof history.DirectorySessionStore =
  history.DirectorySessionStore;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type DirectorySessionStore = history.DirectorySessionStore;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type ListSessionsOptions = history.ListSessionsOptions;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type StoredSessionInfo = history.StoredSessionInfo;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type GetSessionMessagesOptions = history.GetSessionMessagesOptions;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type SessionAssistantMessage = history.SessionAssistantMessage;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type SessionMessage = history.SessionMessage;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type SessionMessageBase = history.SessionMessageBase;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type SessionSystemMessage = history.SessionSystemMessage;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type SessionUserMessage = history.SessionUserMessage;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type ForkSessionOptions = history.ForkSessionOptions;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type ForkSessionResult = history.ForkSessionResult;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type HistoryOptions = history.HistoryOptions;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type SkippedLine = history.SkippedLine;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type DirectorySessionStoreOptions = history.DirectorySessionStoreOptions;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type DirectoryStoreSkip = history.DirectoryStoreSkip;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type ImportSessionOptions = history.ImportSessionOptions;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type ImportSessionResult = history.ImportSessionResult;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type MaterializedSession = history.MaterializedSession;
/** @deprecated Import it from `@duplex/claude/history`; this path goes in 0.4. */
export type MaterializeSessionOptions = history.MaterializeSessionOptions;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export const SessionPool: typeof pool.SessionPool = pool.SessionPool;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type SessionPool = pool.SessionPool;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type ConversationState = pool.ConversationState;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type SessionPoolOptions = pool.SessionPoolOptions;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type PoolSessionOptions = pool.PoolSessionOptions;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type ConversationOptions = pool.ConversationOptions;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type AcquireOptions = pool.AcquireOptions;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type PoolPermissionContext = pool.PoolPermissionContext;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type PoolPermissionHandler = pool.PoolPermissionHandler;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type PoolEvent = pool.PoolEvent;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type PoolHealth = pool.PoolHealth;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type HibernateReason = pool.HibernateReason;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type SpareKind = pool.SpareKind;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type StartVia = pool.StartVia;
/** @deprecated Import it from `@duplex/claude/pool`; this path goes in 0.4. */
export type WaitTimes = pool.WaitTimes;
