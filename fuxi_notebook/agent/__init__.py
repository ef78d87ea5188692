"""The loop and its entry points: `query()` and `FuxiSDKClient`."""

from .client import FuxiSDKClient
from .query import query

__all__ = ["FuxiSDKClient", "query"]
