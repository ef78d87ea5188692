"""How strictly a recorded `%%fuxi` cell is replayed: `off` (call the model), `lenient`
(replay, note divergences), `strict` (replay, stop at the first divergence). One list for
the `--replay` option, `FUXI_REPLAY`, `%fuxi config` and the pytest plugin."""

from __future__ import annotations

__all__ = ["REPLAY_MODES"]

REPLAY_MODES = ("off", "lenient", "strict")
