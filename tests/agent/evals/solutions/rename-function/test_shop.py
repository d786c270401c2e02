from shop.cart import compute_total, describe
from shop.report import daily_report


def test_total():
    assert compute_total([1.0, 2.0]) == 3.0
    assert compute_total([10.0], discount=0.5) == 5.0


def test_describe_and_report():
    assert describe([1.0, 2.0]) == "2 items, 3.0 total"
    assert daily_report([[1.0], [2.0, 3.0]]) == {"orders": 2, "revenue": 6.0}
