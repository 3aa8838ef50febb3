/**
 * An ACP prompt (`session/prompt`'s content blocks) as the Messages-API
 * content of one user line: text, images (base64 or a URL), resource links
 * as `[@name](uri)` mentions, embedded resources as the mention plus a
 * `<context ref="…">` block at the end (as `claude-agent-acp`'s
 * `promptToClaude` does), and `/mcp:server:command` as the CLI's
 * `/server:command (MCP)` spelling.
 *
 * @module
 */

import type { ContentBlock as AcpBlock } from "./_acp.ts";
import type { ContentBlock, ImageBlock, TextBlock } from "../../src/protocol/content.ts";

function mention(uri: string): string {
  const match = /^(?:file|zed):\/\/.*\/([^/]+)$/.exec(uri);
  return match?.[1] ? `[@${match[1]}](${uri})` : uri;
}

function image(block: Extract<AcpBlock, { type: "image" }>): ImageBlock | undefined {
  if (block.data) {
    return {
      type: "image",
      source: { type: "base64", media_type: block.mimeType, data: block.data },
    };
  }
  if (block.uri && /^https?:\/\//.test(block.uri)) {
    return { type: "image", source: { type: "url", url: block.uri } };
  }
  return undefined;
}

/**
 * Converts a prompt.
 *
 * @param prompt The ACP content blocks.
 * @returns The user line's content blocks (at least one), and what was left out.
 */
export function promptContent(
  prompt: readonly AcpBlock[],
): { content: ContentBlock[]; skipped: string[] } {
  const content: ContentBlock[] = [];
  const context: TextBlock[] = [];
  const skipped: string[] = [];
  for (const block of prompt) {
    switch (block.type) {
      case "text": {
        const mcp = /^\/mcp:([^:\s]+):(\S+)(\s+.*)?$/s.exec(block.text);
        content.push({
          type: "text",
          text: mcp ? `/${mcp[1]}:${mcp[2]} (MCP)${mcp[3] ?? ""}` : block.text,
        });
        break;
      }
      case "resource_link":
        content.push({ type: "text", text: mention(block.uri) });
        break;
      case "resource": {
        const resource = block.resource;
        content.push({ type: "text", text: mention(resource.uri) });
        if ("text" in resource) {
          context.push({
            type: "text",
            text: `\n<context ref="${resource.uri}">\n${resource.text}\n</context>`,
          });
        } else if (resource.mimeType?.startsWith("image/")) {
          content.push({
            type: "image",
            source: { type: "base64", media_type: resource.mimeType, data: resource.blob },
          });
        } else skipped.push(`resource ${resource.uri} (binary)`);
        break;
      }
      case "image": {
        const converted = image(block);
        if (converted) content.push(converted);
        else skipped.push("image without data or an http(s) URL");
        break;
      }
      default:
        skipped.push(block.type);
    }
  }
  content.push(...context);
  return { content, skipped };
}
