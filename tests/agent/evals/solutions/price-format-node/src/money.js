// 150 (cents) -> "$1.50"
function formatPrice(cents) {
  return "$" + (cents / 100).toFixed(2);
}

module.exports = { formatPrice };
