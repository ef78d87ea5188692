"""The Python tool: run code in the live kernel namespace, inside the running cell.

The agent runs within a `%%fuxi` cell that is still executing, so the code must not go
through `shell.run_cell` (re-entering it corrupts `In`/`Out`, the execution count and the
display hook). The code is compiled with top-level await allowed and evaluated directly in
`shell.user_ns`; its output, displays and figures are collected by `kernel_capture`.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import io
import itertools
import linecache
import signal
import threading
import tokenize
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import CodeType
from typing import Any, cast

from ...tools.base import (
    DeclaredTool,
    ToolContext,
    ToolError,
    ToolOutput,
    interrupted,
)
from ...tools.truncate import cap_head_tail, strip_ansi
from .capture import Capture, FigureWatch, RenderedFigure, bundle_image, image_block, publish
from .names import NameWatch
from .values import short_repr

__all__ = ["PythonTool"]

MAX_SECTION_CHARS = 20_000
"""Characters kept (head and tail) of stdout, stderr, displays and the result, each."""

MAX_TRACEBACK_LINES = 40
MAX_IMAGES = 8
TICK_SECONDS = 0.1
FILENAME_PREFIX = "<fuxi-python-"

_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_COUNTER = itertools.count(1)
_QUIET_SKIP = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER,
                         tokenize.INDENT, tokenize.DEDENT})


@dataclass
class Compiled:
    """User code ready to run: the statements, then the final expression (if any)."""

    filename: str
    body: CodeType
    last: CodeType | None
    quiet: bool
    """The code ends with `;`, which (as in IPython) hides the final value."""


@dataclass
class Outcome:
    """What happened when the code ran."""

    value: Any = None
    error: BaseException | None = None


class PythonTool(DeclaredTool):
    """Run Python in the user's live kernel, seeing and changing their variables."""

    name = "Python"
    description = (
        "Runs Python code in the user's live Jupyter kernel, in the notebook's own namespace: "
        "the user's variables (DataFrames, models, ...) are available, and variables you "
        "define stay there for the user and for later calls. Returns stdout, stderr and the "
        "value of the last expression (like a notebook cell). Top-level `await` works. "
        "IPython syntax such as `%pip install x`, `%timeit` or `!ls` is accepted. Objects "
        "shown with `display(...)` and matplotlib figures are shown to the user in the "
        "notebook; figures are also returned to you as images. Errors come back with the "
        "traceback of your code. The notebook is busy while the code runs, so avoid very "
        "long computations; the user can interrupt. Use Variables and Inspect to look at "
        "data cheaply, and InsertCell to give the user code to keep in the notebook."
    )

    kind = "execute"

    def __init__(self, shell: Any, names: NameWatch | None = None) -> None:
        self.shell = shell
        #: what the calls do to the kernel's names, for `%fuxi undo` (None: not kept)
        self.names = names
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "Python code to run in the kernel."},
            },
            "required": ["code"],
            "additionalProperties": False,
        }

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Compile, run with output captured, and report; interrupts become cancellation."""
        output, _ = await self._run(input["code"], as_cell=False)
        return output

    async def run_as_cell(self, code: str) -> tuple[ToolOutput, list[dict[str, Any]]]:
        """Run a notebook cell's source: the report for the model, and the nbformat
        outputs the cell shows, as if the user had run it (cell_outputs.py)."""
        return await self._run(code, as_cell=True)

    async def _run(self, code: str, *, as_cell: bool
                   ) -> tuple[ToolOutput, list[dict[str, Any]]]:
        if code.lstrip().startswith("%%fuxi"):
            raise ToolError("The Python tool cannot start another agent (`%%fuxi`) cell.")
        try:
            compiled = compile_code(self.shell, code)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            text = _syntax_error(exc)
            return ToolOutput(content=[_text_block(text)], is_error=True), [
                {"output_type": "error", "ename": type(exc).__name__, "evalue": str(exc),
                 "traceback": text.split("\n")}]
        capture = Capture(self.shell)
        figures = FigureWatch()
        prior = self.names.before(code) if self.names is not None else None
        try:
            outcome = await _run_captured(self.shell, compiled, capture)
        except asyncio.CancelledError:  # what ran so far stays: say what it produced
            raise interrupted(_streams(capture)) from None
        finally:
            capture.republish()
            if self.names is not None and prior is not None:
                self.names.after(prior)
        rendered = figures.render(self.shell, MAX_IMAGES)
        report = _report(self.shell, compiled, capture, outcome, rendered)
        if not as_cell:
            return report, []
        from .cell_outputs import cell_outputs

        error = outcome.error
        return report, cell_outputs(
            self.shell, capture, value=outcome.value,
            show_value=compiled.last is not None and not compiled.quiet and error is None,
            error=error, traceback_text=format_error(error) if error is not None else "",
            figures=rendered, stream_chars=MAX_SECTION_CHARS)


def compile_code(shell: Any, code: str) -> Compiled:
    """IPython syntax transformed, then the statements and final expression compiled.

    The source is registered with `linecache` under a unique `<fuxi-python-N>` name so
    tracebacks show the offending lines.
    """
    source = _transform(shell, code)
    filename = f"{FILENAME_PREFIX}{next(_COUNTER)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.parse(source, filename=filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expression = ast.Expression(cast(ast.Expr, tree.body.pop()).value)
        last = compile(expression, filename, "eval", flags=_FLAGS, dont_inherit=True)
    body = compile(tree, filename, "exec", flags=_FLAGS, dont_inherit=True)
    return Compiled(filename, body, last, quiet=_ends_with_semicolon(source))


def _transform(shell: Any, code: str) -> str:
    """`%magic` and `!cmd` lines rewritten to Python, as IPython does for cells."""
    try:
        return str(shell.transform_cell(code))
    except Exception:
        return code


def _ends_with_semicolon(source: str) -> bool:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    significant = [token for token in tokens if token.type not in _QUIET_SKIP]
    return bool(significant) and significant[-1].string == ";"


async def _run_captured(shell: Any, compiled: Compiled, capture: Capture) -> Outcome:
    """Run with output captured; a KeyboardInterrupt leaves as CancelledError.

    Errors of the user's code (even SystemExit) become the outcome; cancellation of the
    awaiting task passes through untouched.
    """
    interrupted = False
    outcome = Outcome()
    with capture:
        try:
            outcome.value = await _execute(shell, compiled)
        except KeyboardInterrupt:
            interrupted = True
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            outcome.error = exc
    if interrupted:
        raise asyncio.CancelledError("interrupted by the user")
    return outcome


async def _execute(shell: Any, compiled: Compiled) -> Any:
    await _evaluate(shell, compiled.body)
    if compiled.last is None:
        return None
    return await _evaluate(shell, compiled.last)


async def _evaluate(shell: Any, code: CodeType) -> Any:
    """Evaluate in the user namespace; code using top-level await gives a coroutine."""
    with _sigint_interrupts():
        result = eval(code, shell.user_global_ns, shell.user_ns)
    if code.co_flags & inspect.CO_COROUTINE:
        result = await _interruptible(result)
    return result


async def _interruptible(awaitable: Any) -> Any:
    """Await with a 100 ms ticker, so an interrupt is not stuck behind a long sleep.

    ipykernel's SIGINT handler only schedules the cancellation with `call_soon`, which
    does not wake the event loop; the ticker does (see jupyter-feasibility Q7).
    """
    ticker = asyncio.ensure_future(_tick())
    try:
        return await awaitable
    finally:
        ticker.cancel()


async def _tick() -> None:
    while True:
        await asyncio.sleep(TICK_SECONDS)


@contextmanager
def _sigint_interrupts() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt while synchronous user code runs.

    During async cells ipykernel's SIGINT handler only schedules a cancellation, which
    never happens while a busy loop or `time.sleep` holds the thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _streams(capture: Capture) -> str:
    """The stdout and stderr a call produced so far."""
    return capture.streams(MAX_SECTION_CHARS)


def _report(
    shell: Any,
    compiled: Compiled,
    capture: Capture,
    outcome: Outcome,
    figures: list[RenderedFigure],
) -> ToolOutput:
    """One text block of the non-empty sections, then the images."""
    sections = [_streams(capture)] if _streams(capture) else []
    displays = capture.display_texts()
    if displays:
        sections.append("displayed:\n" + cap_head_tail("\n".join(displays), MAX_SECTION_CHARS))
    images = capture.display_images()
    if outcome.error is not None:
        sections.append("error:\n" + cap_head_tail(format_error(outcome.error),
                                                    MAX_SECTION_CHARS))
    elif compiled.last is not None and not compiled.quiet and outcome.value is not None:
        text, image = _format_value(shell, outcome.value, figures)
        sections.append(f"result:\n{text}")
        images += [image] if image is not None else []
    sections += [f"(a figure could not be drawn: {f.problem})" for f in figures if f.problem]
    images += [image_block("image/png", f.png) for f in figures if f.png is not None]
    body = "\n\n".join(sections) or "(no output)"
    if len(images) > MAX_IMAGES:
        body += f"\n\n({len(images) - MAX_IMAGES} more images not returned)"
        images = images[:MAX_IMAGES]
    return ToolOutput(content=[_text_block(body), *images], is_error=outcome.error is not None)


def _format_value(
    shell: Any, value: Any, figures: list[RenderedFigure]
) -> tuple[str, dict[str, Any] | None]:
    """The value's text/plain for the model, plus its image if it has one.

    An image value is also shown to the user, who would otherwise never see it; a figure
    already rendered from pyplot is not returned twice.
    """
    try:
        data, metadata = shell.display_formatter.format(value)
    except Exception:
        data, metadata = {}, {}
    text = data.get("text/plain")
    if not isinstance(text, str):
        text = short_repr(value, MAX_SECTION_CHARS)
    image = None
    if not any(figure.figure is value for figure in figures):
        image = bundle_image(data)
        if image is not None:
            publish(shell, data, metadata)
    return cap_head_tail(strip_ansi(text), MAX_SECTION_CHARS), image


def format_error(error: BaseException) -> str:
    """The traceback from the user's first frame on, at most `MAX_TRACEBACK_LINES` lines."""
    report = traceback.TracebackException.from_exception(error)
    _trim_frames(report)
    lines = strip_ansi("".join(report.format())).rstrip("\n").split("\n")
    if len(lines) > MAX_TRACEBACK_LINES:
        head, tail = 6, MAX_TRACEBACK_LINES - 7
        omitted = len(lines) - head - tail
        lines = [*lines[:head], f"... [{omitted} traceback lines omitted] ...", *lines[-tail:]]
    return "\n".join(lines)


def _trim_frames(report: traceback.TracebackException) -> None:
    """Drop the frames before the user's code (this module's machinery)."""
    seen: set[int] = set()
    pending: list[traceback.TracebackException | None] = [report]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        frames = list(current.stack)
        for index, frame in enumerate(frames):
            if frame.filename.startswith(FILENAME_PREFIX):
                current.stack = traceback.StackSummary.from_list(frames[index:])
                break
        pending += [current.__cause__, current.__context__]


def _syntax_error(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}
