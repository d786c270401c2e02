set -e
python -m pytest -q -p no:cacheprovider
python eval_hidden_wordstat.py
