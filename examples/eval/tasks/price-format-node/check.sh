set -e
[ "$(grep -cE "^\s*(test|it)\(" test/money.test.js)" -gt 2 ] || { echo "no test was added to test/money.test.js"; exit 1; }
npm test
node eval_hidden_money.js
