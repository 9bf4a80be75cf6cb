# SPDX-License-Identifier: GPL-2.0
"""Number formatting and text tables shared by bench.py and bench_alt.py."""


def ratio(a, b):
    return float(f"{a / b:.3g}") if a is not None and b else None


def num(v, digits=1):
    if v is None:
        return "-"
    if abs(v) >= 100 or digits == 0:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


def print_grid(cols, lines):
    """cols: (key, header, align); lines: dicts of strings."""
    widths = {k: max([len(h)] + [len(t[k]) for t in lines])
              for k, h, _ in cols}
    print("  ".join(f"{h:{a}{widths[k]}}" for k, h, a in cols).rstrip())
    print("  ".join("-" * widths[k] for k, _, _ in cols))
    for t in lines:
        print("  ".join(f"{t[k]:{a}{widths[k]}}" for k, _, a in cols)
              .rstrip())
