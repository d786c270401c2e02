const test = require("node:test");
const assert = require("node:assert");
const { parseDuration, formatDuration } = require("../lib/duration");

test("parses minutes and seconds", () => {
  assert.strictEqual(parseDuration("2m5s"), 125);
});

test("parses hours", () => {
  assert.strictEqual(parseDuration("1h30m"), 5400);
});

test("rejects text that is not a duration", () => {
  assert.throws(() => parseDuration("soon"));
});

test("formats seconds", () => {
  assert.strictEqual(formatDuration(125), "2m5s");
});
