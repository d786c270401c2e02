set -e
cargo test --offline -q
mkdir -p tests
cp eval_hidden_fib.rs tests/eval_hidden_fib.rs
name=$(sed -n 's/^name *= *"\(.*\)"/\1/p' Cargo.toml | head -1 | tr - _)
sed -i "s/CRATE/$name/" tests/eval_hidden_fib.rs
cargo test --offline -q --test eval_hidden_fib
