const test = require("node:test");
const assert = require("node:assert");
const { reverse } = require("../src/text");

test("reverse", () => {
  assert.strictEqual(reverse("abc"), "cba");
});
