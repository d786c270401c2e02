# README command 1: its own tests pass, and the functions are right.
set -e
ls test_*.py tests/test_*.py 2>/dev/null | grep -q . || { echo "no test files"; exit 1; }
python -m pytest -q -p no:cacheprovider
python eval_hidden_temperature.py
