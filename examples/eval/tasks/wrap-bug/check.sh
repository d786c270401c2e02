set -e
grep -q "three" tests/test_wrap.py || { echo "tests/test_wrap.py has no test for the last word"; exit 1; }
python -m pytest -q -p no:cacheprovider
python eval_hidden_wrap.py
