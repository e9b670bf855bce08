def total(n: int) -> int:
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s
