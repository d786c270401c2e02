set -e
grep -q "parse_port" tests/test_parse.py || { echo "tests/test_parse.py has no test for parse_port"; exit 1; }
python -m pytest -q -p no:cacheprovider
python eval_hidden_parse.py
