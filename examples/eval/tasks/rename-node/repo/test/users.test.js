const test = require("node:test");
const assert = require("node:assert");
const { getUserName } = require("../src/users");
const { greet, farewell } = require("../src/greet");

test("full name", () => {
  assert.strictEqual(getUserName({ first: "Ada", last: "Lovelace" }), "Ada Lovelace");
  assert.strictEqual(getUserName({ first: "Plato" }), "Plato");
});

test("greetings", () => {
  assert.strictEqual(greet({ first: "Ada", last: "Lovelace" }), "Hello, Ada Lovelace!");
  assert.strictEqual(farewell({ first: "Plato" }), "Goodbye, Plato.");
});
