set -e
test -f stack.test.js || { echo "stack.test.js is missing"; exit 1; }
out=$(node --test 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -Eq "^# pass [1-9]" || { echo "$out"; echo "no test ran"; exit 1; }
node eval_hidden_stack.js
