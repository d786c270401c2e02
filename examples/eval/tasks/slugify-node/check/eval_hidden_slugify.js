const assert = require("node:assert");
const mod = require("./slugify");
const slugify = typeof mod === "function" ? mod : mod.slugify;
assert.strictEqual(slugify("  Hello, World! "), "hello-world");
assert.strictEqual(slugify("A--B__C"), "a-b-c");
assert.strictEqual(slugify("Version 2.0 is OUT"), "version-2-0-is-out");
assert.strictEqual(slugify("---"), "");
console.log("hidden check: ok");
