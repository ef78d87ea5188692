"""Writes `fuxi_notebook/__init__.pyi` from the one list of public names
(`fuxi_notebook/_internal/common/public_names.py`); `--check` fails when it is stale."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuxi_notebook._internal.common.public_names import stub_text  # noqa: E402

STUB = ROOT / "fuxi_notebook" / "__init__.pyi"


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        if not STUB.exists() or STUB.read_text() != stub_text():
            print(f"{STUB} is stale: run python scripts/public_stub.py", file=sys.stderr)
            return 1
        return 0
    STUB.write_text(stub_text())
    print(f"wrote {STUB}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
