const test = require("node:test");
const assert = require("node:assert");
const { displayName } = require("../src/users");
const { greet, farewell } = require("../src/greet");

test("full name", () => {
  assert.strictEqual(displayName({ first: "Ada", last: "Lovelace" }), "Ada Lovelace");
  assert.strictEqual(displayName({ first: "Plato" }), "Plato");
});

test("greetings", () => {
  assert.strictEqual(greet({ first: "Ada", last: "Lovelace" }), "Hello, Ada Lovelace!");
  assert.strictEqual(farewell({ first: "Plato" }), "Goodbye, Plato.");
});
