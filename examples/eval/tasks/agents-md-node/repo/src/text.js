function reverse(text) {
  return [...text].reverse().join("");
}

module.exports = { reverse };
