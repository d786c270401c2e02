// "hello world" -> "Hello World"
function titleCase(text) {
  return text.replace(/\b\w/g, (letter) => letter.toUpperCase());
}

// "a  b " -> "a b"
function squeeze(text) {
  return text.split(/\s+/).filter(Boolean).join(" ");
}

// ("hello world", 8) -> "hello..."
function truncate(text, length) {
  return text.length <= length ? text : text.slice(0, length - 3) + "...";
}

module.exports = { titleCase, squeeze, truncate };
