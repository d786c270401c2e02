set -e
grep -q "1.50" test/money.test.js || { echo "test/money.test.js has no test for \$1.50"; exit 1; }
npm test
node eval_hidden_money.js
