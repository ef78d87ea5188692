"""What the Python tool collects while user code runs: streams, displays and figures.

The tool runs inside a cell that is already executing, so it cannot use IPython's own
output machinery (`run_cell`, the display hook). Instead it swaps `sys.stdout`,
`sys.stderr` and `shell.display_pub` for buffers, points file descriptors 1 and 2 at the
same buffers (`fd_capture.py`), and afterwards shows the user what the code displayed
(redacted, capped) while giving the model a text (and image) account of it. While the code
runs, the output so far goes to the call's progress reporter (see `agent/progress.py`).
"""

from __future__ import annotations

import base64
import contextlib
import io
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from IPython.core.displaypub import CapturingDisplayPublisher

from ...common.media import image_type
from ...tools.truncate import HeadTailBuffer, cap_head_tail, strip_ansi
from .fd_capture import FdCapture

__all__ = ["Capture", "FigureWatch", "image_block"]

STREAM_BYTES = 40_000
"""Bytes of each stream end (head and tail) kept in memory while the code runs."""

DISPLAY_TEXT_LIMIT = 5_000
"""Characters of one captured display's text/plain given to the model."""

IMAGE_TYPES = ("image/png", "image/jpeg")

MAX_DISPLAY_BYTES = 1_000_000
"""A display bigger than this (its data, all types together) is not shown in the cell."""

MAX_CALL_DISPLAY_BYTES = 5_000_000
"""What one Python call may show in the cell, all its displays together."""

_STATIC_BACKENDS = ("agg", "inline", "module://matplotlib_inline", "pdf", "svg", "ps")


class CappedText(io.TextIOBase):
    """A text stream keeping only its head and tail, so a print loop cannot eat memory."""

    def __init__(self) -> None:
        super().__init__()
        self._buffer = HeadTailBuffer(STREAM_BYTES, STREAM_BYTES)
        self._lock = threading.Lock()  # fd 1/2 output arrives from a reader thread

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """Code that checks `sys.stdout.encoding` expects a real codec name."""
        return "utf-8"

    def writable(self) -> bool:
        """Always: this is an output stream."""
        return True

    def isatty(self) -> bool:
        """Never: progress bars should not draw terminal animations into the buffer."""
        return False

    def write(self, text: str) -> int:
        """Keep `text` (head/tail bounded); returns its length like a real stream."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            self._buffer.feed(text.encode("utf-8", errors="replace"))
        return len(text)

    def text(self, limit: int) -> str:
        """Everything written, ANSI-free, carriage-return overwrites collapsed, capped."""
        with self._lock:  # the progress thread reads while the code (or fd reader) writes
            text = self._buffer.text(limit)
        return _collapse_carriage_returns(text)

    @property
    def written(self) -> int:
        """Bytes written so far (all of them, not only those kept): tells that it grew."""
        return self._buffer.total


def _collapse_carriage_returns(text: str) -> str:
    """Each line as a terminal would leave it: only the part after its last `\\r`."""
    lines = text.split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


@dataclass
class Capture:
    """Context manager swapping the streams and the display publisher for buffers."""

    shell: Any
    stdout: CappedText = field(default_factory=CappedText)
    stderr: CappedText = field(default_factory=CappedText)
    displays: CapturingDisplayPublisher = field(default_factory=CapturingDisplayPublisher)
    _saved: tuple[Any, Any, Any] | None = None
    _fds: FdCapture | None = None
    _progress: _ProgressThread | None = None

    def __enter__(self) -> Capture:
        from ...tools.progress import PROGRESS_CHARS, PROGRESS_INTERVAL, reporter

        self._fds = FdCapture(self.stdout.write, self.stderr.write).__enter__()
        self._saved = (sys.stdout, sys.stderr, self.shell.display_pub)
        sys.stdout, sys.stderr = self.stdout, self.stderr
        self.shell.display_pub = self.displays
        sink = reporter()  # taken here: the progress thread does not have the call's context
        if sink is not None:
            self._progress = _ProgressThread(self, sink, PROGRESS_CHARS, PROGRESS_INTERVAL)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._saved is not None:
            sys.stdout, sys.stderr, self.shell.display_pub = self._saved
            self._saved = None
        if self._fds is not None:
            self._fds.__exit__(kind, exc, tb)
            self._fds = None
        if self._progress is not None:  # after the fd pipes drained: the final state
            self._progress.close()
            self._progress = None

    def written(self) -> int:
        """Bytes written to stdout and stderr so far."""
        return self.stdout.written + self.stderr.written

    def streams(self, limit: int, *, so_far: bool = False) -> str:
        """The stdout and stderr so far, each titled and capped to `limit` characters.
        `so_far`: output still being written, whose last line keeps the line break it
        ended with (a line that ended is whole: what shows it need not hold its end back
        as the possible start of a secret)."""
        sections = []
        for title, stream in (("stdout", self.stdout), ("stderr", self.stderr)):
            written = stream.text(limit)
            text = written.rstrip()
            if text:
                ended = so_far and written[len(text):].count("\n") > 0
                sections.append(f"{title}:\n{text}" + ("\n" if ended else ""))
        return "\n\n".join(sections)

    def republish(self) -> None:
        """Show the user, in this cell, what the code displayed: redacted (the cell is
        saved in the notebook) and within the size caps (the notebook must stay usable)."""
        budget = [MAX_CALL_DISPLAY_BYTES]
        for output in list(self.displays.outputs):
            data = capped_bundle(safe_bundle(output["data"]), budget)
            publish(self.shell, data, output.get("metadata"),
                    transient=output.get("transient"), update=bool(output.get("update")))

    def display_texts(self) -> list[str]:
        """The text/plain of each captured display (or the mime types it had)."""
        texts = []
        for output in self.displays.outputs:
            data = output.get("data") or {}
            text = data.get("text/plain")
            if not isinstance(text, str):
                text = "[" + ", ".join(sorted(data)) + " output]"
            texts.append(cap_head_tail(strip_ansi(text), DISPLAY_TEXT_LIMIT))
        return texts

    def display_images(self) -> list[dict[str, Any]]:
        """Image blocks for the model from captured displays (e.g. `plt.show()` inline)."""
        blocks = []
        for output in self.displays.outputs:
            block = bundle_image(output.get("data") or {})
            if block is not None:
                blocks.append(block)
        return blocks


class _ProgressThread:
    """Reports a capture's output so far, from a thread of its own, every `interval` seconds
    while it grew, and once more at `close()`.

    The user code holds the main thread and fd output arrives on reader threads: neither
    should pay for building a report or wait for a slow listener. Writers only bump byte
    counters, which this thread compares, so a print loop of a million lines stays fast.
    """

    def __init__(self, capture: Capture, sink: Callable[[str], None], chars: int,
                 interval: float) -> None:
        self._capture, self._sink, self._chars = capture, sink, chars
        self._interval = interval
        self._reported = 0  # capture.written() when last reported
        self._closed = False
        self._lock = threading.Lock()  # one report at a time; the final one is the last
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fuxi-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._send()

    def _send(self, *, final: bool = False) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = final
            written = self._capture.written()  # read first: a later write is sent next time
            if written == self._reported:
                return
            self._reported = written
            text = self._capture.streams(self._chars, so_far=True)
            with contextlib.suppress(Exception):  # a listener's failure is not the code's
                self._sink(text)

    def close(self) -> None:
        """Send the final state (after any report in flight) and stop the thread."""
        self._stop.set()
        self._send(final=True)
        self._thread.join(1.0)


def publish(
    shell: Any,
    data: dict[str, Any],
    metadata: dict[str, Any] | None = None,
    *,
    transient: dict[str, Any] | None = None,
    update: bool = False,
) -> None:
    """Send one display to the user through the shell's (restored) display publisher."""
    kwargs: dict[str, Any] = {"update": update}
    if transient:
        kwargs["transient"] = transient
    shell.display_pub.publish(data=data, metadata=metadata or {}, **kwargs)


def image_block(media_type: str, data: str) -> dict[str, Any]:
    """An Anthropic image content block from base64 `data`."""
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def bundle_image(data: dict[str, Any]) -> dict[str, Any] | None:
    """The first PNG/JPEG of a mime bundle as an image block, if it has one whose bytes
    really are that type (the API rejects a mismatch, and the block would stay in the
    conversation)."""
    for mime in IMAGE_TYPES:
        payload = data.get(mime)
        if isinstance(payload, bytes):
            payload = base64.b64encode(payload).decode("ascii")
        if not isinstance(payload, str) or not payload:
            continue
        payload = payload.replace("\n", "")
        try:
            head = base64.b64decode(payload[:64], validate=False)
        except ValueError:
            continue
        if image_type(head) == mime:
            return image_block(mime, payload)
    return None


@dataclass
class RenderedFigure:
    """One figure the code made or changed, as PNG, or why it could not be drawn."""

    figure: Any
    png: str | None
    problem: str = ""


class FigureWatch:
    """Which matplotlib figures the user code created or changed.

    Only looks when `matplotlib.pyplot` is already imported (before or by the code):
    the tool never imports matplotlib itself.
    """

    def __init__(self) -> None:
        self._before = self._snapshot()

    @staticmethod
    def _snapshot() -> dict[int, tuple[Any, bool]]:
        """id -> (figure, stale); holding the figure keeps its id from being reused."""
        return {id(fig): (fig, bool(getattr(fig, "stale", False))) for fig in _open_figures()}

    def changed(self) -> list[Any]:
        """New figures, plus old ones that were clean before and are stale now."""
        figures = []
        for figure in _open_figures():
            before = self._before.get(id(figure))
            if before is None or (not before[1] and getattr(figure, "stale", False)):
                figures.append(figure)
        return figures

    def render(self, shell: Any, limit: int) -> list[RenderedFigure]:
        """PNG each changed figure (at most `limit`), show it to the user, close it.

        Closing stops the inline backend from showing it a second time at the end of
        the cell. With an interactive backend (widgets, GUI windows) the figure is live
        on screen already, so it is neither re-shown nor closed.
        """
        figures = self.changed()[:limit]
        plt = sys.modules.get("matplotlib.pyplot")
        static = plt is not None and _static_backend(plt)
        rendered = []
        for figure in figures:
            item = _render_png(figure)
            rendered.append(item)
            if static and plt is not None:
                if item.png is not None:
                    publish(shell, {"image/png": item.png, "text/plain": repr(figure)})
                plt.close(figure)
        return rendered


def _open_figures() -> list[Any]:
    """pyplot's open figures by number, without making any of them current."""
    if sys.modules.get("matplotlib.pyplot") is None:
        return []
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return []
    managers = sorted(helpers.Gcf.get_all_fig_managers(), key=lambda manager: manager.num)
    return [manager.canvas.figure for manager in managers]


def _static_backend(plt: Any) -> bool:
    """Whether the backend only draws on request (Agg, inline) rather than live."""
    backend = str(plt.get_backend()).lower()
    return any(backend.startswith(name) for name in _STATIC_BACKENDS)


def _render_png(figure: Any) -> RenderedFigure:
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    except Exception as exc:
        return RenderedFigure(figure, None, f"{type(exc).__name__}: {exc}")
    return RenderedFigure(figure, base64.b64encode(buffer.getvalue()).decode("ascii"))


def capped_bundle(data: dict[str, Any], budget: list[int]) -> dict[str, Any]:
    """`data`, or one line in its place when it is over the limit for one display or
    over what is left of the call's `budget` (`[bytes]`, spent here)."""
    size = bundle_bytes(data)
    if size <= MAX_DISPLAY_BYTES and size <= budget[0]:
        budget[0] -= size
        return data
    why = (f"over the {MAX_DISPLAY_BYTES // 1000} KB limit for one display"
           if size > MAX_DISPLAY_BYTES else "this call's displays reached the "
           f"{MAX_CALL_DISPLAY_BYTES // 1_000_000} MB limit")
    return {"text/plain": f"[a display of {size // 1000} KB was not shown in the cell: {why}]"}


def safe_bundle(data: dict[str, Any]) -> dict[str, Any]:
    """A mime bundle with secrets redacted from everything but its images."""
    from ...sessions.redact import redact

    return {mime: value if mime.startswith("image/") else redact(value)
            for mime, value in data.items()}


def bundle_bytes(data: dict[str, Any]) -> int:
    """The size of a mime bundle's data as it would be stored."""
    import json

    return sum(len(v) if isinstance(v, str | bytes) else len(json.dumps(v, default=str))
               for v in data.values())
