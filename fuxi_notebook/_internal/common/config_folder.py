"""Where configuration lives: a project's `.fuxi/` folder (settings, agents, commands,
skills, output styles, FUXI.md) and the user's folder (`FUXI_CONFIG_DIR`, else `~/.fuxi`,
pinned at `%load_ext` in a kernel: `switches.config_dir`). One home, so every reader and the
protected-path list agree on the name."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PROJECT_FOLDER", "project_folder"]

#: the name of a project's configuration folder, under its root
PROJECT_FOLDER = ".fuxi"


def project_folder(root: Path) -> Path:
    """`<root>/.fuxi`."""
    return root / PROJECT_FOLDER
