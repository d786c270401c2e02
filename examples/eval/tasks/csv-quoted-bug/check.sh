set -e
grep -q '"b,c"' tests/test_reader.py || { echo "tests/test_reader.py has no test with a quoted field"; exit 1; }
python -m pytest -q -p no:cacheprovider
python eval_hidden_reader.py
