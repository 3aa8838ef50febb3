// This module is browser compatible.
/* The package's version, as deno.json says (a test keeps them equal). */

/** The version of `@duplex/claude`. */
export const VERSION = "0.2.0";
