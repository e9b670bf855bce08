"""Prices, in cents."""

FREE_SHIPPING_FROM = 5000


def with_vat(net: int) -> int:
    """The gross price: 20% VAT on top, rounded down."""
    return net + net * 20 // 100


def bulk_discount(total: int, quantity: int) -> int:
    """10% off from 10 items on."""
    if quantity >= 10:
        return total - total // 10
    return total


def shipping(total: int, express: bool) -> int:
    if express:
        return 1500
    if total >= 5000:
        return 0
    return 500


def describe(order) -> str:  # no annotation: the prover cannot know what `order` is
    return "order " + str(order)


class Cart:
    def total(self, prices: list[int]) -> int:
        return sum(prices)
