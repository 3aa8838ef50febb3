/** @jsxImportSource react */
/** @jsxImportSourceTypes @types/react */
/**
 * The chat page: a stock `useChat` (`@ai-sdk/react`) posting to
 * `/api/chat`, where `chatHandler` runs each chat on a warm Claude Code
 * session. Claude Code's permission requests arrive as the AI SDK's tool
 * approvals: Approve / Deny answer them with `addToolApprovalResponse`, and
 * `sendAutomaticallyWhen` posts the answer so the paused turn goes on. Stop
 * aborts the request, which interrupts the turn.
 *
 * Bundled by esbuild (`bundle.ts`); React puts every text in the DOM as text.
 * Type-checked with the rest of the project, which has no DOM library: the
 * two DOM objects it touches are typed here.
 *
 * @module
 */

import { useChat } from "@ai-sdk/react";
import { type DynamicToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { type FormEvent, useState } from "react";
// @ts-types="@types/react-dom/client"
import { createRoot } from "react-dom/client";

/** What the page reads of the DOM. */
type Field = { readonly value: string };
const { document } = globalThis as unknown as {
  document: { getElementById(id: string): Element | null };
};

function Tool(
  { part, answer }: {
    part: DynamicToolUIPart;
    answer: (id: string, approved: boolean) => void;
  },
) {
  const input = part.input as { command?: string } | undefined;
  return (
    <div className={`tool ${part.state}`}>
      <b>{part.toolName}</b> <code>{input?.command ?? JSON.stringify(part.input)}</code>
      {part.state === "approval-requested" && (
        <span>
          <button type="button" className="approve" onClick={() => answer(part.approval.id, true)}>
            Approve
          </button>
          <button type="button" className="deny" onClick={() => answer(part.approval.id, false)}>
            Deny
          </button>
        </span>
      )}
      {part.state === "output-available" && <pre>{String(part.output)}</pre>}
      {part.state === "output-denied" && <em>denied</em>}
      {part.state === "output-error" && <em>{part.errorText}</em>}
    </div>
  );
}

function Chat() {
  const { id, messages, sendMessage, addToolApprovalResponse, stop, status, error } = useChat({
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  const busy = status === "submitted" || status === "streaming";
  const send = (event: FormEvent) => {
    event.preventDefault();
    if (!input.trim() || busy) return;
    void sendMessage({ text: input });
    setInput("");
  };
  const answer = (id: string, approved: boolean) =>
    addToolApprovalResponse({ id, approved, ...(!approved && { reason: "Denied on the page" }) });
  return (
    <main data-status={status} data-chat={id}>
      {messages.map((message) => (
        <div key={message.id} className={`message ${message.role}`}>
          {message.parts.map((part, i) =>
            part.type === "text"
              ? <p key={i} className="text">{part.text}</p>
              : part.type === "dynamic-tool"
              ? <Tool key={i} part={part} answer={answer} />
              : null
          )}
        </div>
      ))}
      {error && <p className="error">{error.message}</p>}
      <form onSubmit={send}>
        <input
          id="prompt"
          value={input}
          onChange={(e) => setInput((e.currentTarget as unknown as Field).value)}
        />
        {busy
          ? <button id="stop" type="button" onClick={() => void stop()}>Stop</button>
          : <button id="send" type="submit">Send</button>}
      </form>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(<Chat />);
