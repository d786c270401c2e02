set -e
[ "$(grep -c "def test_" tests/test_wrap.py)" -gt 1 ] || { echo "no test was added to tests/test_wrap.py"; exit 1; }
python -m pytest -q -p no:cacheprovider
python eval_hidden_wrap.py
