"""The `anthropic` client, imported without the SDK's type index.

`import anthropic` runs the package's `__init__`, and that imports `anthropic.types`, whose
`__init__` imports every request and response model of the API (some 2,400 modules: two
thirds of a cold `query()` process's import time). The loop uses none of them: it posts
the body as bytes and reads the stream as JSON (`anthropic.py`, `wire_body.py`). What it
uses is the client (`anthropic._client`: retries, errors, auth, the Bedrock and Vertex
clients), which imports a few hundred of the types by their modules. So `load_client`
imports the client's own modules, and only those, when `anthropic` is not imported yet:

- The package `anthropic` is made from its own spec, its `__init__` not run. The first
  time anything asks it for a name it lacks (`anthropic.Anthropic`, `from anthropic import
  X`, `dir(anthropic)`, `import *`), the real `__init__` runs in that very module, once,
  and the name is returned: code that imports `anthropic` itself finds the package it
  knows. Its submodules import as usual (the import system asks the package for a
  submodule's name first; that question never runs the `__init__`).
- A package under `anthropic.types` whose `__init__` is only an index (`from .x import
  Y as Y` lines and nothing else, checked on the text when it is read) resolves each
  name on first use from its index (the module it comes from is imported then) instead
  of importing every module it lists. Any other `__init__` runs as usual. The names are
  the same objects the index would bind; `dir()` lists them all and `import *` binds them
  all.

Its HTTP stack (httpcore2) imports `trio` when it is installed, for code running under
trio; the loop runs on asyncio (common/foreign_loop.py bridges trio callers). While the
client's modules are imported, `import trio` gives a stand-in that imports trio the first
time anything of it is used (httpcore2 uses it only inside functions that run under
trio); `trio` itself stays out of `sys.modules` until someone imports it.

If `anthropic` is already imported (by the user's code, in a kernel), the package is used
as it is. What stays: the client's modules and the types they import themselves (its
tracing imports the message-create parameters, ~550 modules of `types.beta`): see
docs/benchmarks.md.
"""

from __future__ import annotations
import __future__

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

__all__ = ["SdkParts", "load_client", "load_provider_client", "read_index"]

_TOP = "anthropic"
_TYPES = "anthropic.types"
#: one `from .module import (A as A, B as B)` statement of an index `__init__`
_INDEX_LINE = re.compile(r"^from \.(\w+) import (?:\(([^)]*)\)|([^\n(]+))$", re.M)
_ALIAS = re.compile(r"^(\w+)(?:\s+as\s+(\w+))?$")
_FUTURE = re.compile(r"^from __future__ import annotations$", re.M)
_COMMENT = re.compile(r"#[^\n]*")
_LOCK = threading.RLock()


class SdkParts:
    """What the model needs of the SDK, from the modules that define it."""

    def __init__(self) -> None:
        from anthropic._client import AsyncAnthropic
        from anthropic._exceptions import APIConnectionError, APIStatusError
        from anthropic._streaming import AsyncStream
        from anthropic.types.message import Message

        self.AsyncAnthropic: Any = AsyncAnthropic
        self.AsyncStream: Any = AsyncStream
        self.APIStatusError: type[Exception] = APIStatusError
        self.APIConnectionError: type[Exception] = APIConnectionError
        self.Message: Any = Message


_PARTS: list[SdkParts] = []


def load_client() -> SdkParts:
    """The client's parts, imported once (without the type index when `anthropic` is
    not imported yet)."""
    if _PARTS:
        return _PARTS[0]
    with _LOCK:
        if not _PARTS:
            _PARTS.append(_import_parts())
    return _PARTS[0]


#: a cloud provider's client class: its module and name in the `anthropic` package
_PROVIDER_CLIENTS = {"bedrock": ("anthropic.lib.bedrock._client", "AsyncAnthropicBedrock"),
                     "vertex": ("anthropic.lib.vertex._client", "AsyncAnthropicVertex"),
                     "foundry": ("anthropic.lib.foundry", "AsyncAnthropicFoundry")}


def load_provider_client(name: str) -> Any:
    """The client class of a cloud provider (`access/providers.py`), from its own module, after
    the client's parts (`load_client`)."""
    load_client()
    module, attribute = _PROVIDER_CLIENTS[name]
    return getattr(importlib.import_module(module), attribute)


def _import_parts() -> SdkParts:
    with _trio_on_first_use():
        import httpcore2  # noqa: F401  (what imports trio; the client imports it later)

        if _TOP in sys.modules:  # imported already (or being imported): as it is
            return SdkParts()
        finder = _IndexFinder()
        sys.meta_path.insert(0, finder)
        try:
            if _lazy_top() is None:  # not a package we can read: the usual import
                import anthropic  # noqa: F401

            parts = SdkParts()
            from anthropic._utils._logs import setup_logging

            setup_logging()  # ANTHROPIC_LOG, as the package's `__init__` would
            return parts
        finally:
            sys.meta_path.remove(finder)


class _Deferred(ModuleType):
    """What `import trio` gives while the client's modules are imported: the real module,
    imported the first time one of its names is used."""

    def __getattr__(self, name: str) -> Any:
        with _LOCK:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
            real = importlib.import_module(self.__name__)
        return getattr(real, name)


@contextmanager
def _trio_on_first_use() -> Iterator[None]:
    if "trio" in sys.modules or importlib.util.find_spec("trio") is None:
        yield  # imported already, or not installed: httpcore2 finds it as it is
        return
    stand_in = _Deferred("trio")
    sys.modules["trio"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("trio") is stand_in:
            del sys.modules["trio"]


def _lazy_top() -> ModuleType | None:
    """`anthropic` in `sys.modules`, its `__init__` run on the first name it lacks."""
    spec = importlib.util.find_spec(_TOP)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return None
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    folders = list(spec.submodule_search_locations)
    once = threading.RLock()  # not _LOCK: the thread importing the client never waits here

    def initialise() -> None:
        with once:  # one thread runs it; the others wait, then read the result
            if module.__dict__.get("__getattr__") is not lazy_getattr:
                return
            del module.__dict__["__getattr__"], module.__dict__["__dir__"]
            try:
                loader.exec_module(module)
            except BaseException:
                module.__dict__.update(__getattr__=lazy_getattr, __dir__=lazy_dir)
                raise

    def lazy_getattr(name: str) -> Any:
        if _is_submodule(folders, name):  # the import system imports it itself
            raise AttributeError(name)
        initialise()
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {_TOP!r} has no attribute {name!r}") from None

    def lazy_dir() -> list[str]:
        initialise()
        return sorted(module.__dict__)

    module.__dict__.update(__getattr__=lazy_getattr, __dir__=lazy_dir)
    sys.modules[_TOP] = module
    return module


def _is_submodule(folders: Sequence[str], name: str) -> bool:
    return importlib.machinery.PathFinder.find_spec(f"{_TOP}.{name}", list(folders)) is not None


def read_index(source: str) -> dict[str, tuple[str, str]] | None:
    """name -> (module, its name there) of an index `__init__`; None when the text holds
    anything but `from .module import ...` statements (then it runs as usual)."""
    names: dict[str, tuple[str, str]] = {}
    for match in _INDEX_LINE.finditer(source):
        for part in (match.group(2) or match.group(3)).split(","):
            part = " ".join(_COMMENT.sub("", part).split())
            if not part:
                continue
            alias = _ALIAS.match(part)
            if alias is None:
                return None
            names[alias.group(2) or alias.group(1)] = (match.group(1), alias.group(1))
    rest = _COMMENT.sub("", _FUTURE.sub("", _INDEX_LINE.sub("", source)))
    return names if not rest.strip() and names else None


class _IndexLoader(importlib.abc.Loader):
    """Binds a package whose `__init__` is an index: each name on first use. Anything
    else (its source for a traceback, its resources) the package's own loader answers."""

    def __init__(self, index: dict[str, tuple[str, str]], real: Any, future: bool) -> None:
        self.index = index
        self.real = real
        self.future = future

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__.update(_index_hooks(module, self.index))
        if self.future:  # what `from __future__ import annotations` binds
            module.__dict__["annotations"] = __future__.annotations


def _index_hooks(module: ModuleType, index: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """The package's `__getattr__` and `__dir__`, resolving names from its index."""
    name, namespace = module.__name__, module.__dict__
    modules = {origin for origin, _ in index.values()}

    def resolve(attribute: str) -> Any:
        if attribute in index:
            origin, original = index[attribute]
            value = getattr(importlib.import_module(f"{name}.{origin}"), original)
        elif attribute in modules:  # a module the index imports is bound as the package's
            value = importlib.import_module(f"{name}.{attribute}")
        elif attribute == "__all__":  # `import *`: every name bound, then the namespace
            for each in index:
                resolve(each)
            raise AttributeError(attribute)
        else:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        namespace[attribute] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *index, *modules})

    return {"__getattr__": resolve, "__dir__": names}


class _IndexFinder(importlib.abc.MetaPathFinder):
    """Finds the packages under `anthropic.types` whose `__init__` is an index."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not (fullname == _TYPES or fullname.startswith(_TYPES + ".")):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.submodule_search_locations or spec.origin is None:
            return None  # a module, or nothing: the usual finders
        try:
            with open(spec.origin, encoding="utf-8") as file:
                source = file.read()
        except (OSError, UnicodeDecodeError):
            return None
        index = read_index(source)
        if index is None:
            return None
        spec.loader = _IndexLoader(index, spec.loader, bool(_FUTURE.search(source)))
        return spec
