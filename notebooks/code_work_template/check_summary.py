"""Checks for salestools: run them with `python3 check_summary.py`."""

import sys

from salestools import growth, rolling_mean


def check_growth() -> None:
    assert growth(100, 120) == 20.0, growth(100, 120)
    assert growth(80, 60) == -25.0, growth(80, 60)


def check_rolling_mean() -> None:
    got = rolling_mean([1, 2, 3, 4], 2)
    assert got == [1.5, 2.5, 3.5], f"rolling_mean([1, 2, 3, 4], 2) gave {got}"
    got = rolling_mean([5, 5, 5], 3)
    assert got == [5.0], f"rolling_mean([5, 5, 5], 3) gave {got}"


if __name__ == "__main__":
    failed = 0
    for name, check in list(globals().items()):
        if name.startswith("check_"):
            try:
                check()
            except AssertionError as error:
                failed += 1
                print(f"FAIL {name}: {error}")
            else:
                print(f"ok   {name}")
    sys.exit(1 if failed else 0)
