import assert from "node:assert/strict";
import { base64url, fromBase64url } from "../../src/codec/base64url.ts";

Deno.test({
  name: "fromBase64url() reads what base64url() writes and nothing else",
  permissions: "none",
  fn() {
    for (let length = 0; length < 40; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 97 + length * 31) % 256);
      assert.deepEqual(fromBase64url(base64url(bytes)), bytes, `${length} bytes`);
    }
    for (const bad of ["ab+c", "ab/c", "abc=", "a", "abcde", "ab c", "é"]) {
      assert.equal(fromBase64url(bad), undefined, bad);
    }
  },
});

Deno.test("base64url() writes RFC 4648 section 5 without padding", { permissions: "none" }, () => {
  assert.equal(base64url(Uint8Array.of(0xfb, 0xff)), "-_8");
  assert.equal(base64url(new TextEncoder().encode("any carnal pleas")), "YW55IGNhcm5hbCBwbGVhcw");
  assert.equal(base64url(new Uint8Array()), "");
});
