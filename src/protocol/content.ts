// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Messages-API content blocks, as the CLI carries them inside `assistant` and
 * `user` frames and as `send` accepts them.
 *
 * @module
 */

/** A text block. */
export interface TextBlock {
  type: "text";
  text: string;
}

/** A thinking block (extended thinking). */
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string;
}

/** A redacted thinking block. */
export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

/** The model asks to run a tool. */
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The result of a tool, sent back to the model. */
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
}

/** An image given to the model. */
export interface ImageBlock {
  type: "image";
  source:
    | { type: "base64"; media_type: string; data: string }
    | { type: "url"; url: string };
}

/** A document given to the model. */
export interface DocumentBlock {
  type: "document";
  source: Record<string, unknown>;
  title?: string;
}

/** Any block type this version does not name; kept as it came. */
export interface OtherBlock {
  type: string;
  [field: string]: unknown;
}

/** A content block of a message. */
export type ContentBlock =
  | TextBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ToolResultBlock
  | ImageBlock
  | DocumentBlock;

/** What `send` accepts as a user turn: text, or content blocks. */
export type UserContent = string | readonly (ContentBlock | OtherBlock)[];

/** Token counts the API reports for a message or a turn. */
export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  [field: string]: unknown;
}
