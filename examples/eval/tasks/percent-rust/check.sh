set -e
cargo test --offline -q
cp eval_hidden_percent.rs tests/eval_hidden_percent.rs
cp eval_hidden_stats.rs tests/eval_hidden_stats.rs
status=0
cargo test --offline -q --test eval_hidden_percent --test eval_hidden_stats || status=$?
rm -f tests/eval_hidden_percent.rs tests/eval_hidden_stats.rs
exit $status
