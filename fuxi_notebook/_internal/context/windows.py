"""Each model's context window, in one table, and the thresholds derived from it.

Source: the model documentation as collected in `reference/anthropic-and-mcp.md` (A5):
the 5.x models have a 1M-token window, Haiku 4.5 and the older models 200K. A model the
table does not know gets the smaller window: compacting early costs a summary, guessing
too large costs a rejected request.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models.pricing import model_family

__all__ = ["CONTEXT_WINDOWS", "DEFAULT_WINDOW", "Window", "context_window"]

_MILLION = 1_000_000
DEFAULT_WINDOW = 200_000

#: Model id prefix -> context window in tokens (longest matching prefix wins).
CONTEXT_WINDOWS: dict[str, int] = {
    "claude-fable-5": _MILLION,
    "claude-mythos-5": _MILLION,
    "claude-opus-5": _MILLION,
    "claude-sonnet-5": _MILLION,
    "claude-haiku-5": _MILLION,
    "claude-opus-4": DEFAULT_WINDOW,
    "claude-sonnet-4": DEFAULT_WINDOW,
    "claude-haiku-4": DEFAULT_WINDOW,
}


def context_window(model: str) -> int:
    """The context window of `model` in tokens (`DEFAULT_WINDOW` when unknown)."""
    family = model_family(model, CONTEXT_WINDOWS)
    return CONTEXT_WINDOWS[family] if family is not None else DEFAULT_WINDOW


@dataclass(frozen=True)
class Window:
    """The budget of one conversation's requests.

    Attributes:
        size: the model's context window (or the configured one), in tokens.
        output: the `max_tokens` each request reserves for the answer.
    """

    size: int
    output: int

    @property
    def reserve(self) -> int:
        """Room kept free for the answer and for the estimate's error: the request's
        output (at most a fifth of the window) plus 5 % of the window."""
        return min(self.output, self.size // 5) + self.size // 20

    @property
    def threshold(self) -> int:
        """Above this many (estimated) input tokens, the conversation is compacted."""
        return self.size - self.reserve

    @property
    def keep(self) -> int:
        """How many tokens of the latest turns a compaction keeps word for word (at
        least the last exchange is always kept)."""
        return min(self.size // 10, 50_000)

    @property
    def summary_tokens(self) -> int:
        """The `max_tokens` of the summary request."""
        return max(1_024, min(8_192, self.size // 8))

    @property
    def results(self) -> int:
        """The most one turn's tool results may take: a bigger result is cut with a
        notice, so that no single turn can push a request over the window."""
        return max(1_000, self.size // 4)
