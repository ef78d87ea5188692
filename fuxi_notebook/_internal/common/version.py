"""The package version (pyproject.toml names the same one)."""

__all__ = ["VERSION"]

VERSION = "0.1.0"
