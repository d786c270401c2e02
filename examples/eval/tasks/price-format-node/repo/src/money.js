// 150 (cents) -> "$1.5"
function formatPrice(cents) {
  return "$" + cents / 100;
}

module.exports = { formatPrice };
