from textutil.wrap import wrap


def boxed(text, width):
    """`text` wrapped to `width` inside a box of `+`, `-` and `|`."""
    lines = wrap(text, width)
    edge = "+" + "-" * (width + 2) + "+"
    return "\n".join([edge, *(f"| {line.ljust(width)} |" for line in lines), edge])
