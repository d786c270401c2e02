set -e
npm test
node --test eval_hidden_duration_tests.js
node eval_hidden_duration.js
