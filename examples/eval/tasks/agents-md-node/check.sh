set -e
grep -q "capitalize" test/text.test.js || { echo "test/text.test.js has no test for capitalize"; exit 1; }
sed -n '/^## API/,/^## /p' README.md | grep -q "^- capitalize(" || { echo "README.md's API section does not list capitalize"; exit 1; }
npm test
node eval_hidden_capitalize.js
