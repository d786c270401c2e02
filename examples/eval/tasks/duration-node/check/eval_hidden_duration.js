const assert = require("node:assert");
const { parseDuration, formatDuration } = require("./lib/duration");
assert.strictEqual(parseDuration("2h"), 7200);
assert.strictEqual(parseDuration("1h1m1s"), 3661);
assert.strictEqual(formatDuration(5400), "1h30m");
assert.strictEqual(formatDuration(7261), "2h1m1s");
assert.strictEqual(formatDuration(0), "0s");
console.log("hidden check: ok");
