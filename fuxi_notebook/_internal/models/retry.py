"""Retry policy for model requests: which failures to retry and how long to wait.

The SDK's own retries cover only the HTTP attempt up to the response headers and honour
any `retry-after` without a cap, so we switch them off and retry here: before the first
byte and also when a stream breaks or stalls before any content block completed.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

__all__ = ["RetryPolicy"]


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


@dataclass
class RetryPolicy:
    """How a model retries.

    Attributes:
        max_retries: attempts after the first (`FUXI_MAX_RETRIES`, default 4).
        base_delay: first backoff in seconds; doubles per retry up to `max_delay`.
        max_delay: cap of the computed backoff.
        max_retry_after: cap of a server-sent `retry-after` (`FUXI_MAX_RETRY_AFTER`, 60 s).
        stall_timeout: seconds without a stream event before the attempt is abandoned
            (`FUXI_STALL_TIMEOUT`, default 90 s).
        connect_timeout: seconds to establish a connection.
    """

    max_retries: int = field(default_factory=lambda: int(_env_float("FUXI_MAX_RETRIES", 4)))
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = field(default_factory=lambda: _env_float("FUXI_MAX_RETRY_AFTER", 60))
    stall_timeout: float = field(default_factory=lambda: _env_float("FUXI_STALL_TIMEOUT", 90))
    connect_timeout: float = 10.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        if retry_after is not None and retry_after > 0:
            return min(retry_after, self.max_retry_after)
        backoff: float = min(self.base_delay * 2**attempt, self.max_delay)
        return backoff * (1 - 0.25 * random.random())
