set -e
python -m pytest -q -p no:cacheprovider
python -m pytest -q -p no:cacheprovider eval_hidden_test_pricing.py
python eval_hidden_pricing.py
