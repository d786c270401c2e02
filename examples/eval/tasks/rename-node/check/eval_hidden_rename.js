const assert = require("node:assert");
const { displayName } = require("./src/users");
const { greet, farewell } = require("./src/greet");
assert.strictEqual(displayName({ first: "Ada", last: "Lovelace" }), "Ada Lovelace");
assert.strictEqual(displayName({ first: "Plato" }), "Plato");
assert.strictEqual(greet({ first: "Grace", last: "Hopper" }), "Hello, Grace Hopper!");
assert.strictEqual(farewell({ first: "Ada", last: "Lovelace" }), "Goodbye, Ada Lovelace.");
console.log("hidden check: ok");
