const test = require("node:test");
const assert = require("node:assert");
const { titleCase, squeeze } = require("../src/strings");

test("title case", () => {
  assert.strictEqual(titleCase("hello world"), "Hello World");
});

test("squeeze", () => {
  assert.strictEqual(squeeze(" a  b "), "a b");
});
