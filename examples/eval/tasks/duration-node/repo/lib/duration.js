const { SECONDS } = require("./units");

// "1h30m" -> 5400 (seconds); throws on text that is not a duration.
function parseDuration(text) {
  const parts = text.trim().match(/\d+[hms]/g);
  if (!parts || parts.join("") !== text.trim()) {
    throw new Error(`not a duration: ${text}`);
  }
  return parts.reduce((total, part) => total + parseInt(part, 10) * SECONDS[part.slice(-1)], 0);
}

// 5400 -> "1h30m"
function formatDuration(seconds) {
  const hours = Math.floor(seconds / SECONDS.h);
  const minutes = Math.floor((seconds % SECONDS.h) / SECONDS.m);
  const rest = seconds % SECONDS.m;
  return [hours && `${hours}h`, minutes && `${minutes}m`, rest && `${rest}s`].filter(Boolean).join("") || "0s";
}

module.exports = { parseDuration, formatDuration };
