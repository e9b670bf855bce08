def total(n: int) -> int:
    s = 0
    j = n
    while j > 0:
        j -= 1
        s += n - 1 - j
    return s
