"""Issue 35, the split-secret class where a text is cut: the kernel context sent with a
prompt (and kept in the cell's record) shows each cell the user ran, its code cut to
`CELL_CODE_CHARS`, and its `Out` value's repr cut to `OUT_REPR_CHARS`; a secret of the
shared corpus (`split_secrets.py`) straddling either cut shows in no part in the context."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from fuxi_notebook._internal.notebook.kernel.context import CELL_CODE_CHARS, OUT_REPR_CHARS
from fuxi_notebook._internal.notebook.kernel.tools import KernelContext
from fuxi_notebook._internal.sessions.redact import redact_text

from ..sessions.split_secrets import CORPUS, ENV, leaks
from .test_kernel_context import fake_cell, run

CASES = [case for case in CORPUS if not case.explicit]  # the kernel knows no explicit ones


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_cells_code_cut_in_the_context_shows_no_part_of_a_secret(shell, case):
    hidden = case.hidden[0]
    middle = case.text.index(hidden) + len(hidden) // 2
    code = "#" * (CELL_CODE_CHARS - middle - 1) + "\n" + case.text + "x = 1\n" * 50
    context = KernelContext(shell)
    context.describe()  # what ran before this test is seen
    fake_cell(shell, code)  # a cell the user ran (its code is never executed here)
    with mock.patch.dict(os.environ, ENV):
        shown = context.describe(max_chars=100_000)
        assert shown is not None and shown.count("x = 1") < 50  # the code was cut
        assert not leaks(case, shown), shown


@pytest.mark.parametrize("case", [c for c in CASES if "\n" not in c.text.rstrip("\n")],
                         ids=lambda case: case.name)
def test_a_cells_out_value_cut_in_the_context_shows_no_part_of_a_secret(shell, case):
    """`[Out N]`: the value's one-line repr, cut to `OUT_REPR_CHARS`."""
    context = KernelContext(shell)
    context.describe()
    shell.user_ns["_cut_value"] = _Shown(_straddling(case, OUT_REPR_CHARS - 3))
    run(shell, "_cut_value")  # its Out is the value; the code holds no secret
    with mock.patch.dict(os.environ, ENV):
        shown = context.describe(max_chars=100_000)
        assert shown is not None and "[Out " in shown
        assert not leaks(case, shown), shown


class _Shown:
    """An object whose repr is the given text (up to reprlib's limit for objects)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _straddling(case, at: int) -> str:
    """A text whose character `at` is in the middle of the case's secret."""
    hidden = case.hidden[0]
    middle = case.text.index(hidden) + len(hidden) // 2
    return "." * (at - middle - 1) + " " + case.text.rstrip("\n") + " " + "," * 300


@pytest.mark.parametrize("case", [c for c in CASES if "\n" not in c.text.rstrip("\n")],
                         ids=lambda case: case.name)
def test_a_values_short_repr_shows_no_part_of_a_secret_its_cuts_split(case):
    """A value's one-line repr (a variable's preview, an `Out` in the context): an
    object's repr cut at the line's end, a string's ends kept by reprlib."""
    from fuxi_notebook._internal.notebook.kernel.values import _REPR, short_repr

    keep = (_REPR.maxstring - 3) // 2  # the start of a long string that reprlib keeps
    tail = _REPR.maxstring - 3 - keep  # and its end
    line = case.text.rstrip("\n")
    middle = line.index(case.hidden[0]) + len(case.hidden[0]) // 2
    values = [_Shown(_straddling(case, OUT_REPR_CHARS - 3)),  # cut by the line
              _straddling(case, keep),  # a string, cut at the end of its start
              "," * 500 + line + "," * (tail - (len(line) - middle))]  # ... at its end
    with mock.patch.dict(os.environ, ENV):
        for value in values:
            shown = short_repr(value, OUT_REPR_CHARS)
            assert "..." in shown, shown
            assert not leaks(case, shown), (value, shown)


@pytest.mark.parametrize("case", [c for c in CASES if "\n" not in c.text.rstrip("\n")],
                         ids=lambda case: case.name)
def test_an_inspected_strings_ends_show_no_part_of_a_secret_their_cuts_split(case):
    """The Inspect tool (and a `{name}` in a prompt) describes a long string by its start
    and end, as reprlib keeps them; the description is what the record keeps."""
    from fuxi_notebook._internal.notebook.kernel.inspect import _REPR, describe_object

    keep = (_REPR.maxstring - 3) // 2
    tail = _REPR.maxstring - 3 - keep
    line = case.text.rstrip("\n")
    middle = line.index(case.hidden[0]) + len(case.hidden[0]) // 2
    for value in (_straddling(case, keep) + "," * 3000,
                  "," * 5000 + line + "," * (tail - (len(line) - middle))):
        with mock.patch.dict(os.environ, ENV):
            shown = redact_text(describe_object("s", value))  # as the record keeps it
            assert "..." in shown
            assert not leaks(case, shown), shown
