const test = require("node:test");
const assert = require("node:assert");
const { Stack } = require("./stack");

test("push and pop", () => {
  const stack = new Stack();
  stack.push(1);
  assert.strictEqual(stack.pop(), 1);
  assert.throws(() => stack.pop());
});
