set -e
npm test
node --test eval_hidden_truncate_tests.js
node eval_hidden_truncate.js
