"""Coupons (work in progress: this file does not parse yet)."""


def apply_coupon(total: int, percent: int) -> int:
    return total - total * percent // 100 +
