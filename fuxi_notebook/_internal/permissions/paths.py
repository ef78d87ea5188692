"""The filesystem boundary: path sanity, resolution, working directories, protected paths.

Every check uses canonical paths compared component-wise (never string prefixes), and
looks at both the path as written (the link) and where it really leads (the target):
a deny matches if either does, an allow needs both. Protected paths are protected also
when they do not exist yet (creating `.mcp.json` is as dangerous as editing it).
"""

from __future__ import annotations

import functools
import os
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..common.config_folder import PROJECT_FOLDER

__all__ = [
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "PathFacts",
    "config_folder",
    "config_folders",
    "hard_link_reason",
    "inside_any",
    "path_problem",
    "protected_reason",
    "resolve_path",
]

#: Case-insensitive file systems (macOS, Windows) need case-folded comparisons.
CASE_INSENSITIVE = sys.platform in ("darwin", "win32")

#: Directories whose contents configure code that runs later (VCS hooks, editors, agents).
PROTECTED_DIRS: tuple[str, ...] = (
    ".git", ".config/git", ".vscode", ".idea", ".husky", ".cargo", ".devcontainer", ".yarn",
    ".mvn", PROJECT_FOLDER, ".claude", ".jupyter", ".ipython",
)
#: Files that run code or configure tools that do (shell rc files, package managers, ...).
PROTECTED_FILES: tuple[str, ...] = (
    ".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".profile", ".envrc", ".npmrc",
    ".yarnrc", ".yarnrc.yml", ".pnp.cjs", ".pnp.js", "bunfig.toml", ".bazelrc",
    ".pre-commit-config.yaml", "lefthook.yml", "lefthook.yaml", ".devcontainer.json",
    ".ripgreprc", "pyrightconfig.json", ".mcp.json", ".fuxi.json", ".claude.json",
    "ipython_config.py", "ipython_kernel_config.py", "kernel.json", "sitecustomize.py",
    "usercustomize.py", "pip.conf", ".pypirc", "gradle-wrapper.properties",
    "maven-wrapper.properties",
)
_PROTECTED_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"jupyter_.*_config\.(py|json)$"),  # jupyter_server_config.py, ...
    re.compile(r".*\.pth$"),  # executed by site.py at every interpreter start
    re.compile(r"activate(\.\w+)?$"),  # virtualenv activation scripts
)
_NETWORK_PREFIXES = ("\\\\", "//?/", "\\??\\", "/net/", "/afs/")


@dataclass(frozen=True)
class PathFacts:
    """A path as written (absolute, normalised) and where it leads (symlinks resolved)."""

    link: Path
    target: Path

    def both(self) -> tuple[Path, ...]:
        return (self.link,) if self.link == self.target else (self.link, self.target)


def path_problem(text: str) -> str | None:
    """Why a path string cannot be safely resolved, or None."""
    if "\x00" in text:
        return "the path contains a NUL byte"
    if text != text.rstrip() or text.rstrip().endswith(("'", '"')):
        return "the path ends with whitespace or a quote (check the quoting)"
    if text.startswith(_NETWORK_PREFIXES) or re.match(r"^//[^/]", text):
        return "the path names a network location or device namespace"
    if any(ord(ch) < 32 for ch in text):
        return "the path contains a control character"
    return None


def resolve_path(text: str, base: Path) -> PathFacts:
    """Resolve `text` against `base`: `~` expanded, `..` folded, symlinks followed."""
    candidate = Path(os.path.expanduser(text))
    if not candidate.is_absolute():
        candidate = base / candidate
    link = Path(os.path.normpath(candidate))
    return PathFacts(link=link, target=Path(os.path.realpath(candidate)))


def _fold(path: Path | str) -> str:
    value = str(path)
    return value.casefold() if CASE_INSENSITIVE else value


def inside_any(path: Path, roots: Iterable[Path]) -> bool:
    """Whether `path` is one of `roots` or below one of them (component-wise: a root must
    be followed by a separator, so `/w` does not contain `/w2`)."""
    text = _fold(str(path))
    for root in roots:
        base = _fold(str(root))
        if text == base or text.startswith(base.rstrip("/") + "/"):
            return True
    return False


def protected_reason(facts: PathFacts, *,
                     config: tuple[Path, ...] | None = None) -> str | None:
    """Why writing to this path must always be confirmed, or None; `config` is the user
    configuration folders (`config_folders()`), for a caller that checks many paths
    (else they are looked up)."""
    users = config if config is not None else config_folders()
    for path in facts.both():
        for user in users[1:]:
            if _inside_folder(path, user):
                return f"{path} is inside the fuxi configuration folder ({user}/)"
        reason = _protected_one(path, users[0])
        if reason:
            return reason
    return None


def hard_link_reason(facts: PathFacts) -> str | None:
    """Why writing into this existing file changes more than its name says, or None.

    A file with several hard links is one file under several names, any of which may be
    outside the working directories or protected (`ln ~/.bashrc notes.txt`).
    """
    try:
        info = os.stat(facts.target)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode) or info.st_nlink < 2:
        return None
    return (f"{facts.link} has {info.st_nlink} hard links: writing it changes a file that "
            "other names share, which may be outside the working directories or protected")


def config_folders() -> tuple[Path, ...]:
    """Every user configuration folder in force (a session's own first), resolved."""
    from ..common.switches import config_dirs

    return tuple(Path(os.path.realpath(folder)) for folder in config_dirs())


def config_folder() -> Path:
    """The user configuration folder (settings, hooks, trusted folders), symlinks resolved."""
    from ..common.switches import config_dir

    return Path(os.path.realpath(config_dir()))


@functools.cache
def _needles(insensitive: bool) -> tuple[tuple[tuple[str, str], ...], dict[str, str]]:
    """The protected names as compared: (`/dir/`, dir) pairs, and folded file -> file."""
    fold = str.casefold if insensitive else str
    return (tuple((f"/{fold(d)}/", d) for d in PROTECTED_DIRS),
            {fold(f): f for f in PROTECTED_FILES})


def _inside_folder(path: Path, folder: Path) -> bool:
    text, base = _fold(str(path)), _fold(str(folder))
    return text == base or text.startswith(base + os.sep)


def _protected_one(path: Path, user: Path) -> str | None:
    text = _fold(str(path))
    if _inside_folder(path, user):
        return f"{path} is inside the fuxi configuration folder ({user}/)"
    directories, files = _needles(CASE_INSENSITIVE)
    padded = f"/{text}/"
    for needle, directory in directories:
        if needle in padded:
            return f"{path} is inside a protected directory ({directory}/)"
    name = text.rsplit("/", 1)[-1]
    if name in files:
        return f"{path} is a protected file ({files[name]})"
    for pattern in _PROTECTED_PATTERNS:
        if pattern.match(name):
            return f"{path} is a protected file (it configures or runs code at start-up)"
    return None
