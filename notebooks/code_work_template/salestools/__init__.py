"""Small helpers for the monthly sales report."""

from .summary import growth, rolling_mean

__all__ = ["growth", "rolling_mean"]
