const test = require("node:test");
const assert = require("node:assert");
const { reverse, capitalize } = require("../src/text");

test("reverse", () => {
  assert.strictEqual(reverse("abc"), "cba");
});

test("capitalize", () => {
  assert.strictEqual(capitalize("hELLO"), "Hello");
});
