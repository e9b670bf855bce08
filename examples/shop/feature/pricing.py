"""Prices, in cents."""

FREE_SHIPPING_FROM = 5_000
CURRENCY = "EUR"  # new module-level constant: a change outside functions


def with_vat(net: int) -> int:
    """The gross price: 20% VAT on top, rounded down."""
    # Refactored: one multiplication instead of two (equivalent for every int).
    return net * 120 // 100


def bulk_discount(total: int, quantity: int) -> int:
    """10% off from 10 items on."""
    if quantity > 10:  # a real behaviour change: exactly 10 items no longer get the discount
        return total - total // 10
    return total


def shipping(total: int, express: bool) -> int:
    # Restructured conditions, same behaviour.
    if not express and total >= 5000:
        return 0
    return 1500 if express else 500


def describe(order) -> str:  # no annotation: the prover cannot know what `order` is
    return f"order {order}"


def loyalty_points(total: int) -> int:
    """New: one point per euro."""
    return total // 100


class Cart:
    def total(self, prices: list[int]) -> int:
        result = 0
        for p in prices:
            result += p
        return result
