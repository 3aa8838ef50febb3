// This module is browser compatible.
/*
 * base64url without padding (RFC 4648 section 5), both ways: the bearer
 * subprotocol of the relay wire, JWT parts, session tokens and hashed ids.
 */

/**
 * Encodes bytes as base64url without padding (RFC 4648 section 5).
 *
 * @param bytes The bytes.
 * @returns The text.
 */
export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * Decodes base64url without padding (RFC 4648 section 5), strictly.
 *
 * @param text The text.
 * @returns The bytes, or undefined for anything but unpadded base64url.
 */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const padded = text.replaceAll("-", "+").replaceAll("_", "/") +
    "=".repeat((4 - (text.length % 4)) % 4);
  try {
    return Uint8Array.from(atob(padded), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}
