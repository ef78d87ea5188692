"""A transcript in the local store that cannot be read (not a regular file, nested too
deeply, no entry at all) is one line naming it: `Unreadable` where that session is read,
and, in a listing, a warning while every other session is still listed. Each bad kind of
file against every reader of transcripts is in tests/settings/bad_file_readers.py."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from fuxi_notebook import FuxiAgentOptions, ScriptedModel, list_sessions, query
from fuxi_notebook._internal.common.reading import Unreadable
from fuxi_notebook._internal.sessions.store import FileSessionStore, project_key_for_directory
from fuxi_notebook.testing import text

GOOD = "900d900d-0000-4000-8000-000000000035"
BAD = "bad0bad0-0000-4000-8000-000000000035"

KINDS: dict[str, Callable[[Path], None]] = {
    "directory": lambda path: path.mkdir(),
    "deep": lambda path: path.write_text('{"a": ' + "[" * 500 + "]" * 500 + "}\n"),
    "no entry": lambda path: path.write_bytes(b'{"type": "user", "cut sh\n\xe9\xe9\n'),
}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_bad_transcript_is_one_line_and_hides_no_other_session(tmp_path, kind):
    options = FuxiAgentOptions(model=ScriptedModel([[text("Hi.")]]), cwd=tmp_path,
                               session_id=GOOD)
    async for _ in query(prompt="hello", options=options):
        pass
    project = project_key_for_directory(tmp_path)
    bad = Path(os.environ["FUXI_CONFIG_DIR"]) / "projects" / project / f"{BAD}.jsonl"
    KINDS[kind](bad)
    with pytest.raises(Unreadable) as refused:
        FileSessionStore().read({"project_key": project, "session_id": BAD})
    assert f"{BAD}.jsonl" in str(refused.value) and "\n" not in str(refused.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        listed = list_sessions(tmp_path)
    assert [info.session_id for info in listed] == [GOOD]
    assert [str(w.message) for w in caught] == [str(refused.value)]
