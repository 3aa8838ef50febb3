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
  /** Always `"text"`. */
  type: "text";
  /** The text. */
  text: string;
}

/** A thinking block (extended thinking). */
export interface ThinkingBlock {
  /** Always `"thinking"`. */
  type: "thinking";
  /** The model's reasoning text. */
  thinking: string;
  /** The API's signature of the thinking block. */
  signature?: string;
}

/** A redacted thinking block. */
export interface RedactedThinkingBlock {
  /** Always `"redacted_thinking"`. */
  type: "redacted_thinking";
  /** The encrypted thinking, opaque to the host. */
  data: string;
}

/** The model asks to run a tool. */
export interface ToolUseBlock {
  /** Always `"tool_use"`. */
  type: "tool_use";
  /** The tool use id (`toolu_…`), which its result and permission request refer to. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The input the model gave the tool. */
  input: Record<string, unknown>;
}

/** The result of a tool, sent back to the model. */
export interface ToolResultBlock {
  /** Always `"tool_result"`. */
  type: "tool_result";
  /** The id of the `tool_use` block this answers. */
  tool_use_id: string;
  /** The tool's output, or the error or denial message. */
  content?: string | ContentBlock[];
  /** Whether the tool failed or was denied. */
  is_error?: boolean;
}

/** An image given to the model. */
export interface ImageBlock {
  /** Always `"image"`. */
  type: "image";
  /** The image: base64 data with its media type, or a URL. */
  source:
    | { type: "base64"; media_type: string; data: string }
    | { type: "url"; url: string };
}

/** A document given to the model. */
export interface DocumentBlock {
  /** Always `"document"`. */
  type: "document";
  /** The document's source, as the Messages API takes it. */
  source: Record<string, unknown>;
  /** The document's title. */
  title?: string;
}

/** Any block type this version does not name; kept as it came. */
export interface OtherBlock {
  /** The block type. */
  type: string;
  /** The block's fields, as sent. */
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
  /** Input tokens, not counting cache reads and writes. */
  input_tokens?: number;
  /** Output tokens. */
  output_tokens?: number;
  /** Input tokens written to the prompt cache. */
  cache_creation_input_tokens?: number;
  /** Input tokens read from the prompt cache. */
  cache_read_input_tokens?: number;
  /** Other usage fields (`server_tool_use`, `service_tier`, …), as sent. */
  [field: string]: unknown;
}
