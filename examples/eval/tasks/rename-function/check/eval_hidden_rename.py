from shop.cart import compute_total, describe
from shop.report import daily_report

assert compute_total([1.0, 2.0]) == 3.0 and compute_total([10.0], discount=0.5) == 5.0
assert describe([2.0]) == "1 items, 2.0 total"
assert daily_report([[1.0], [2.0, 3.0]]) == {"orders": 2, "revenue": 6.0}
print("hidden check: ok")
