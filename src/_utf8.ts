// This module is browser compatible.
/* The one UTF-8 length count of the library. */

/**
 * How many bytes `text` takes as UTF-8, without encoding it (a lone surrogate
 * counts 3, as `TextEncoder` writes U+FFFD for it).
 *
 * @param text Any string.
 * @returns Its UTF-8 length in bytes.
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      bytes += 1;
    } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // 4 bytes for 2 units
        i++;
      } else {
        bytes += 2;
      }
    } else {
      bytes += 2;
    }
  }
  return bytes;
}
