from billing.invoices import invoice_line, invoice_total
from billing.reminders import reminder


def test_invoice():
    assert invoice_line("Tea", 3.5) == "Tea: 3.50 EUR"
    assert invoice_total([1, 2.25]) == "Total: 3.25 EUR"


def test_reminder():
    assert reminder("Ann", 10, 3) == "Dear Ann, 10.00 EUR is 3 days overdue."
