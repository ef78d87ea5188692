"""The code seal (issue 36, point 4): every way of writing a namespace is seen, with the
dicts' version tags and without them, and one seal serves the process.

A check reads by identity only the namespaces whose dict was written to since it last
found them intact (`integrity._tag_reader`); these tests write each way Python can
and expect the same report either way."""

from __future__ import annotations

import sys
import sysconfig
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fuxi_notebook._internal.permissions import integrity, judge
from fuxi_notebook._internal.permissions.engine import PermissionEngine
from fuxi_notebook._internal.permissions.integrity import CodeSeal, PolicyGuard

JUDGE = judge.__name__


class Equal:
    """Compares equal to anything: a stand-in only a comparison by identity sees."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


@pytest.fixture(params=["tags", "every entry"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """With the version tags (where CPython has them) and with every entry read."""
    if request.param == "every entry":
        monkeypatch.setattr(integrity, "_tag_reader", lambda: None, raising=False)
    elif getattr(integrity, "_tag_reader", lambda: None)() is None:
        pytest.skip("no dict version tags on this interpreter")
    yield request.param


def _rebind_global(value: Any) -> None:
    """A function of judge's that rebinds one of its module's names (`global`)."""
    def rebind() -> None:
        global reach_of
        reach_of = value

    types.FunctionType(rebind.__code__, vars(judge), closure=rebind.__closure__)()


WRITES: dict[str, Callable[[], None]] = {
    "setattr": lambda: setattr(judge, "reach_of", print),
    "vars()[name] =": lambda: vars(judge).__setitem__("reach_of", print),
    "vars().update": lambda: vars(judge).update(reach_of=print),
    "a global statement": lambda: _rebind_global(print),
    "an equal stand-in": lambda: setattr(judge, "reach_of", Equal()),
    "del": lambda: delattr(judge, "reach_of"),
    "sys.modules": lambda: sys.modules.__setitem__(JUDGE, types.ModuleType(JUDGE)),
}


@pytest.mark.parametrize("how", list(WRITES))
def test_each_way_of_rebinding_a_module_name_is_seen_and_put_back(mode, how):
    original, module = judge.reach_of, sys.modules[JUDGE]
    seal = CodeSeal()
    assert seal.breaches() == []
    try:
        WRITES[how]()
        found = seal.breaches()
        assert found == ([f"the module {JUDGE} was replaced"] if how == "sys.modules"
                         else [f"{JUDGE}.reach_of was replaced"])
        assert seal.breaches() == found  # seen again until put back
    finally:
        seal.restore()
    assert judge.reach_of is original and sys.modules[JUDGE] is module
    assert seal.breaches() == []


@pytest.mark.parametrize("how", ["replaced", "deleted"])
def test_a_method_replaced_or_deleted_is_seen_and_put_back(mode, how):
    original = PermissionEngine.__dict__["_auto_approved"]
    seal = CodeSeal()
    try:
        if how == "replaced":
            PermissionEngine._auto_approved = lambda self, judged, hook: True
        else:
            del PermissionEngine._auto_approved
        assert seal.breaches() == ["PermissionEngine._auto_approved was replaced"]
    finally:
        seal.restore()
    assert PermissionEngine.__dict__["_auto_approved"] is original
    assert seal.breaches() == []


def test_a_write_that_keeps_every_sealed_value_is_not_tampering(mode):
    """A new name in a module (a submodule imported lazily sets one on its package), and a
    name deleted and set again to the very same object."""
    seal = CodeSeal()
    namespace = vars(judge)
    try:
        namespace["_added_after_the_seal"] = object()
        original = namespace.pop("reach_of")
        namespace["reach_of"] = original
        assert seal.breaches() == []
        assert seal.breaches() == []
    finally:
        namespace.pop("_added_after_the_seal", None)
    assert seal.breaches() == []


def test_a_change_after_a_harmless_write_is_still_seen(mode, monkeypatch):
    """Once a written namespace is found intact, the next write to it is seen again."""
    seal = CodeSeal()
    monkeypatch.setitem(vars(judge), "_added_after_the_seal", 1)
    assert seal.breaches() == []
    monkeypatch.setattr(judge, "reach_of", print)
    assert seal.breaches() == [f"{JUDGE}.reach_of was replaced"]


def test_the_version_tags_are_used_where_cpython_has_them():
    """The fast path is on where it can be (its self-test passed), off elsewhere."""
    expected = (sys.implementation.name == "cpython" and sys.version_info[:2] < (3, 14)
                and not sysconfig.get_config_var("Py_GIL_DISABLED"))
    assert (getattr(integrity, "_tag_reader", lambda: None)() is not None) == expected


# --- one seal for the process -----------------------------------------------------------


def test_an_intact_seal_serves_every_session():
    first, second = PolicyGuard(), PolicyGuard()
    first.arm()
    second.arm()
    assert first.code is not None and second.code is first.code
    assert CodeSeal.current() is first.code


def test_a_change_made_between_sessions_gets_a_new_seal(monkeypatch):
    """The user's own patch between two sessions (as a test's monkeypatch) is the code the
    next session starts from, not tampering; the change is seen against the old seal."""
    old = CodeSeal.current()
    monkeypatch.setattr(judge, "reach_of", print)
    new = CodeSeal.current()
    assert new is not old and new.breaches() == []
    assert old.breaches() == [f"{JUDGE}.reach_of was replaced"]


def test_modules_imported_after_the_seal_are_taken_in(monkeypatch):
    """What a new seal would cover, the reused one covers: a module (and its classes)
    imported since the last session."""
    CodeSeal.current()
    name = f"{integrity._PACKAGE}._imported_late_for_a_test"
    late = types.ModuleType(name)
    exec("class Late:\n    def method(self):\n        pass\nVALUE = 1\n", vars(late))
    monkeypatch.setitem(sys.modules, name, late)
    seal = CodeSeal.current()
    assert seal.breaches() == []
    late.VALUE = 2
    late.Late.method = print
    assert sorted(seal.breaches()) == ["Late.method was replaced", f"{name}.VALUE was replaced"]
    seal.restore()
    assert late.VALUE == 1 and seal.breaches() == []


def test_a_class_whose_dict_the_seal_cannot_reach_is_read_at_every_check(monkeypatch):
    """Without the class's own dict there is no tag to trust: its live view is read."""
    import gc

    monkeypatch.setattr(gc, "get_referents", lambda *objects: [])
    seal = CodeSeal()
    monkeypatch.undo()
    original = PermissionEngine.__dict__["_auto_approved"]
    assert seal.breaches() == [] and seal.breaches() == []
    try:
        PermissionEngine._auto_approved = lambda self, judged, hook: True
        assert seal.breaches() == ["PermissionEngine._auto_approved was replaced"]
    finally:
        seal.restore()
    assert PermissionEngine.__dict__["_auto_approved"] is original
