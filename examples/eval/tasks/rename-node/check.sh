set -e
if grep -rn "getUserName" --include=*.js --exclude-dir=node_modules .; then echo "getUserName is still used"; exit 1; fi
npm test
node eval_hidden_rename.js
