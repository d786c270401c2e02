set -e
grep -q "search" tests/test_catalog.py || { echo "tests/test_catalog.py has no test for search"; exit 1; }
python -m pytest -q -p no:cacheprovider
python eval_hidden_search.py
