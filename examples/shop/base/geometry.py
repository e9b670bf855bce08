"""Shapes of parcels, in centimetres."""


def area(w: int, h: int) -> int:
    return w * h


def perimeter(w: int, h: int) -> int:
    return 2 * (w + h)
