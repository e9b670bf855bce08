"""Shapes of parcels, in centimetres."""


def rect_area(w: int, h: int) -> int:
    return w * h


def perimeter(w: int, h: int) -> int:
    return 2 * (w + h)
