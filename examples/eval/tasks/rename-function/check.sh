set -e
if grep -rn "calc_total" --include=*.py . --exclude-dir=.venv; then echo "calc_total is still used"; exit 1; fi
python -m pytest -q -p no:cacheprovider
python eval_hidden_rename.py
