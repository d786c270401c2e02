const assert = require("node:assert");
const { capitalize, reverse } = require("./src/text");
assert.strictEqual(capitalize("hELLO"), "Hello");
assert.strictEqual(capitalize("world"), "World");
assert.strictEqual(capitalize("a"), "A");
assert.strictEqual(capitalize(""), "");
assert.strictEqual(reverse("ab"), "ba");
console.log("hidden check: ok");
