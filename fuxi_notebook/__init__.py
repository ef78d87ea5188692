"""fuxi_notebook: a Fuxi-Code-style autonomous agent loop for Python and Jupyter.

The public API mirrors the seed's agent SDK, with `Fuxi` names::

    from fuxi_notebook import query, FuxiAgentOptions, AssistantMessage, ResultMessage

The public names are listed once, in `_internal/common/public_names.py`. Importing this
package costs almost nothing: each public name is imported on first use
(PEP 562), so `%load_ext fuxi_notebook` stays fast; `anthropic`, `jsonschema` and the
shell parser load only when a run needs them.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._internal.common.public_names import EXPORTS as _EXPORTS
from ._internal.common.public_names import public_order as _public_order
from ._internal.common.version import VERSION

__version__ = VERSION

__all__ = sorted([*_EXPORTS, "__version__", "load_ipython_extension",
                  "unload_ipython_extension"], key=_public_order)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fuxi_notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext fuxi_notebook`: registers `%%fuxi` (the agent loads on first use)."""
    from ._internal.notebook.cell.magic import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext fuxi_notebook`."""
    from ._internal.notebook.cell.magic import unload_ipython_extension as unload

    unload(shell)
