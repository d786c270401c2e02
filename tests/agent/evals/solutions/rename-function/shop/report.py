from shop.cart import compute_total


def daily_report(orders):
    totals = [compute_total(order) for order in orders]
    return {"orders": len(orders), "revenue": sum(totals)}
