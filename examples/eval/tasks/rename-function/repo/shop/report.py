from shop.cart import calc_total


def daily_report(orders):
    totals = [calc_total(order) for order in orders]
    return {"orders": len(orders), "revenue": sum(totals)}
