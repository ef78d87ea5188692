"""Summaries for the monthly sales report."""


def growth(before: float, after: float) -> float:
    """Percentage change from `before` to `after`, rounded to one decimal."""
    return round((after - before) / before * 100, 1)


def rolling_mean(values: list[float], window: int) -> list[float]:
    """The mean of every run of `window` consecutive values, one per full window."""
    if window < 1:
        raise ValueError("window must be at least 1")
    means = []
    for end in range(window, len(values)):
        means.append(sum(values[end - window:end]) / window)
    return means
