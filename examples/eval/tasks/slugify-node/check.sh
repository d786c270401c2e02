set -e
node --test
node eval_hidden_slugify.js
