const test = require("node:test");
const assert = require("node:assert");
const { truncate } = require("./src/strings");

test("short text is unchanged", () => {
  assert.strictEqual(truncate("hello", 10), "hello");
  assert.strictEqual(truncate("hello", 5), "hello");
});

test("long text is cut to the length, dots included", () => {
  assert.strictEqual(truncate("hello world", 8), "hello...");
});
