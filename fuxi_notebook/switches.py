"""Environment switches that change what the agent may do, read once per process.

`IS_SANDBOX` (permits `bypassPermissions` as root) and `FUXI_FRONTEND` (whether anyone can
answer an approval) widen or redirect the policy. Code the model runs in the kernel can set
`os.environ`; a switch read at decision time would let it grant itself more. So the values
are taken when this module is first imported — at `%load_ext`, or at the first use of the
package in a script — and later changes to the environment are ignored (say so in the
README). Tests change them through `pytest.MonkeyPatch.setitem(switches.VALUES, ...)`.
"""

from __future__ import annotations

import os

__all__ = ["NAMES", "VALUES", "switch"]

NAMES = ("IS_SANDBOX", "FUXI_FRONTEND")
#: the values at load; integrity checks (`permissions/integrity.py`) watch this dict
VALUES: dict[str, str | None] = {name: os.environ.get(name) for name in NAMES}


def switch(name: str) -> str | None:
    """The value `name` had in the environment when the package was loaded."""
    return VALUES[name]
