// "hello world" -> "Hello World"
function titleCase(text) {
  return text.replace(/\b\w/g, (letter) => letter.toUpperCase());
}

// "a  b " -> "a b"
function squeeze(text) {
  return text.split(/\s+/).filter(Boolean).join(" ");
}

module.exports = { titleCase, squeeze };
