set -e
[ "$(grep -c "def test_" tests/test_reader.py)" -gt 3 ] || { echo "no test was added to tests/test_reader.py"; exit 1; }
python -m pytest -q -p no:cacheprovider
python eval_hidden_reader.py
