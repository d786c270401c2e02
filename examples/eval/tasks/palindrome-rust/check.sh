set -e
out=$(cargo test --offline -q 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -Eq "test result: ok\. [1-9]" || { echo "$out"; echo "no test ran"; exit 1; }
mkdir -p tests
cp eval_hidden_palindrome.rs tests/eval_hidden_palindrome.rs
name=$(sed -n 's/^name *= *"\(.*\)"/\1/p' Cargo.toml | head -1 | tr - _)
sed -i "s/CRATE/$name/" tests/eval_hidden_palindrome.rs
status=0
cargo test --offline -q --test eval_hidden_palindrome || status=$?
rm -f tests/eval_hidden_palindrome.rs
exit $status
