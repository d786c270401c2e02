const { formatPrice } = require("./money");

// [{ name, cents }] -> lines "name  $x.yz", then "total  $x.yz"
function receipt(items) {
  const lines = items.map((item) => `${item.name}  ${formatPrice(item.cents)}`);
  const total = items.reduce((sum, item) => sum + item.cents, 0);
  return [...lines, `total  ${formatPrice(total)}`].join("\n");
}

module.exports = { receipt };
