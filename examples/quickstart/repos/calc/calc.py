def add(a, b):
    return a - b  # bug


def sub(a, b):
    return a - b


def mul(a, b):
    return a + b  # bug
