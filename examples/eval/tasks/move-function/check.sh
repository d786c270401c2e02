set -e
if grep -n "def format_money" billing/invoices.py; then echo "format_money is still defined in billing/invoices.py"; exit 1; fi
python -m pytest -q -p no:cacheprovider
python eval_hidden_money.py
