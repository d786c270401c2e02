const test = require("node:test");
const assert = require("node:assert");
const { formatPrice } = require("../src/money");
const { receipt } = require("../src/receipt");

test("whole dollars", () => {
  assert.strictEqual(formatPrice(1234), "$12.34");
});

test("receipt lists items and the total", () => {
  assert.strictEqual(receipt([{ name: "pen", cents: 199 }]), "pen  $1.99\ntotal  $1.99");
});

test("cents always have two digits", () => {
  assert.strictEqual(formatPrice(150), "$1.50");
  assert.strictEqual(formatPrice(5), "$0.05");
});
