"""Judgements on one `SimpleCommand`: read-only, code runner, critical removal.

These are allowlists, not denylists: anything not recognised is "not read-only".
Read-only names match exactly (`./ls` in the workspace is not `ls`); interpreter names
match on the basename (`/usr/bin/python3` is python3), since there a wrong "yes" is safe.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

from .kill import kills_own_process
from .model import SimpleCommand

__all__ = ["critical_removal", "is_interpreter", "is_read_only", "kills_own_process",
           "safe_assignments"]

Args = tuple[str, ...]

_SAFE_ASSIGNMENT = re.compile(
    r"(?:LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|COLUMNS|LINES|TERM)=")
_PLAIN_READ_ONLY = frozenset({
    "ls", "cat", "echo", "pwd", "head", "tail", "wc", "which", "whereis", "type", "true",
    "false", "nl", "basename", "dirname", "realpath", "readlink", "stat", "du", "df", "cut",
    "tr", "grep", "egrep", "fgrep", "diff", "cmp", "comm", "whoami", "id", "uname", "sleep",
    "cd",
})
_GLOB_SENSITIVE = frozenset({"find", "sort", "sed", "git"})
_GLOB_CHARS = re.compile(r"[*?\[]")
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_UNSAFE = _FIND_EXEC | {"-delete", "-fls", "-fprint", "-fprint0", "-fprintf"}
_SED_PRINT = re.compile(r"\d+(,\d+)?p")
_GIT_READ = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "blame"})
_GIT_BRANCH_FLAGS = frozenset({
    "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-l", "--list",
    "--show-current", "--no-color", "--color", "--column", "--no-column", "-q", "--quiet",
})
_GIT_BRANCH_PREFIXES = ("--color=", "--sort=", "--format=", "--column=")


def _flag(args: Args, short: str = "", long: Sequence[str] = (), values: str = "") -> bool:
    """Whether an option is given: `--long`, `--long=x`, or a short letter in a bundle.

    Letters in `values` take the rest of their bundle as a value (`sort -t,`), so the
    scan of that bundle stops there.
    """
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--"):
            if arg.split("=", 1)[0] in long:
                return True
        elif arg.startswith("-"):
            for char in arg[1:]:
                if char in short:
                    return True
                if char in values:
                    break
    return False


def _operands(args: Args, with_value: Sequence[str] = ()) -> list[str]:
    """Non-option arguments, skipping the values of short options in `with_value`."""
    out: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            return out + list(args[i + 1:])
        elif arg.startswith("-") and arg != "-":
            skip = arg in with_value
        else:
            out.append(arg)
    return out


def _git_ok(args: Args) -> bool:
    """Listing/reading subcommands only, and no global options (`-C`, `-c`, `--git-dir`)."""
    if not args or args[0].startswith("-"):
        return False
    sub, rest = args[0], args[1:]
    if _flag(rest, long=("--output", "--ext-diff")):
        return False
    if sub in _GIT_READ:
        return True
    if sub == "branch":
        return all(a in _GIT_BRANCH_FLAGS or a.startswith(_GIT_BRANCH_PREFIXES) for a in rest)
    if sub == "remote":
        return rest in ((), ("-v",), ("--verbose",))
    if sub == "tag":
        return rest in ((), ("-l",), ("--list",))
    return False


_CHECKED: dict[str, Callable[[Args], bool]] = {
    "find": lambda a: not any(x in _FIND_UNSAFE for x in a),
    "rg": lambda a: not _flag(a, "z", ("--pre", "--hostname-bin", "--search-zip"),
                              values="efgtTABCmMjrE"),
    "sed": lambda a: len(a) in (2, 3) and a[0] == "-n" and bool(_SED_PRINT.fullmatch(a[1]))
    and (len(a) == 2 or not a[2].startswith("-")),
    "sort": lambda a: not _flag(a, "o", ("--output", "--compress-program"), values="ktTS"),
    "uniq": lambda a: len(_operands(a, ("-f", "-s", "-w"))) < 2,
    "date": lambda a: not _flag(a, "s", ("--set",), values="dfrI"),
    "hostname": lambda a: not _operands(a) and not _flag(a, "bF", ("--file", "--boot")),
    "file": lambda a: not _flag(a, "mfC", ("--magic-file", "--files-from", "--compile")),
    "tree": lambda a: not _flag(a, "o"),
    "printf": lambda a: not _flag(a, "v"),
    "test": lambda a: not any(x in ("-v", "-R") for x in a),
    "[": lambda a: not any(x in ("-v", "-R") for x in a),
    "env": lambda a: all(re.match(r"[A-Za-z_]\w*=", x) for x in a),
    "printenv": lambda a: all(re.fullmatch(r"[A-Za-z_]\w*|-0|--null", x) for x in a),
    "git": _git_ok,
    "command": lambda a: a[:1] in (("-v",), ("-V",)),
}


def safe_assignments(cmd: SimpleCommand) -> bool:
    """Whether every `NAME=value` before the command (or after `env`) is one that only
    changes formatting (locale, colours, width), never what runs (PATH, LD_PRELOAD, PAGER)."""
    inner = cmd.inner()
    return all(_SAFE_ASSIGNMENT.match(a) for a in (*cmd.assignments, *inner.assignments))


def is_read_only(cmd: SimpleCommand) -> bool:
    """True when the command only reads: safe to run without asking in any mode."""
    inner = cmd.inner()
    cut = len(cmd.argv) - len(inner.argv)
    if any(cmd.dynamic) or "xargs" in map(os.path.basename, cmd.argv[:cut]):
        return False  # unknown words, or arguments that come from input
    if not safe_assignments(cmd):
        return False  # PATH=, LD_PRELOAD=, GIT_* ... change what runs
    if any(r.is_write and r.target != "/dev/null" for r in cmd.redirects):
        return False
    if not inner.argv:
        return True
    name, args = inner.argv[0], inner.argv[1:]
    if name in _GLOB_SENSITIVE and _has_glob(inner):
        return False  # `find *` with a file named `-delete` in the directory
    if name in _PLAIN_READ_ONLY:
        return True
    check = _CHECKED.get(name)
    return check is not None and check(args)


def _has_glob(inner: SimpleCommand) -> bool:
    """An unquoted glob among the arguments (any glob character if that is unknown)."""
    if len(inner.globbed) == len(inner.argv):
        return any(inner.globbed[1:])
    return any(_GLOB_CHARS.search(a) for a in inner.argv[1:])


_INTERPRETERS = frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "ipython", "ipython3", "jupyter",
    "node", "nodejs", "deno", "bun", "perl", "ruby", "irb", "php", "lua", "luajit", "R",
    "Rscript", "julia", "tclsh", "wish", "expect", "pwsh", "powershell", "osascript", "awk",
    "gawk", "mawk", "nawk", "busybox", "toybox", "bash", "sh", "zsh", "dash", "ksh", "mksh",
    "fish", "csh", "tcsh", "rbash", "eval", "exec", "source", ".", "sudo", "su", "doas",
    "pkexec", "runuser", "sg", "npx", "bunx", "pnpx", "uvx", "pipx", "ssh", "scp", "rsync",
    "watch", "setsid", "ionice", "flock", "chroot", "nsenter", "unshare", "strace", "ltrace",
    "gdb", "lldb", "valgrind", "taskset", "chrt", "numactl", "prlimit", "cgexec", "firejail",
    "bwrap", "proot", "script", "tmux", "screen", "at", "batch", "systemd-run", "parallel",
    "xvfb-run", "dbus-run-session", "faketime", "torsocks", "proxychains", "proxychains4",
    "nix-shell", "vi", "vim", "nvim", "emacs", "ed", "ex", "fuxi", "claude", "codex",
    "gemini",
    # wrappers that strip_wrappers could not strip (unknown options): judge as runners
    "timeout", "time", "nice", "nohup", "stdbuf", "builtin", "noglob", "xargs",
})
_VERSIONED = re.compile(
    r"(?:python|pypy|ipython|perl|ruby|php|lua|luajit|node|nodejs|julia|tclsh|wish|pwsh)"
    r"[0-9]+(?:\.[0-9]+)*")
_RUNNER_SUBCOMMANDS = {
    "npm": {"exec", "x"}, "pnpm": {"dlx", "exec"}, "yarn": {"dlx", "exec"}, "uv": {"run"},
    "poetry": {"run"}, "pdm": {"run"}, "hatch": {"run", "shell"}, "conda": {"run"},
    "mamba": {"run"}, "micromamba": {"run"}, "pixi": {"run", "exec"}, "pipenv": {"run"},
    "rye": {"run"}, "tox": {"exec"}, "bundle": {"exec"}, "direnv": {"exec"},
    "mise": {"exec", "x"}, "devbox": {"run"}, "docker": {"exec", "run"},
    "podman": {"exec", "run"}, "nerdctl": {"exec", "run"}, "kubectl": {"exec", "run"},
}


def is_interpreter(cmd: SimpleCommand) -> bool:
    """True when the command runs arbitrary code, so a wildcard rule must not approve it."""
    inner = cmd.inner()
    if not inner.argv:
        return False
    name, args = os.path.basename(inner.argv[0]), inner.argv[1:]
    if name == "command":
        return bool(args) and args[0] not in ("-v", "-V")
    if name in _INTERPRETERS or _VERSIONED.fullmatch(name):
        return True
    if name in _RUNNER_SUBCOMMANDS:
        return any(a in _RUNNER_SUBCOMMANDS[name] for a in args)
    if name == "env":
        return any(a.startswith("-") for a in args)
    if name == "find":
        return any(a in _FIND_EXEC for a in args)
    if name == "git":
        return any(a == "-c" or a.startswith(("--config-env", "--exec-path")) for a in args)
    if name == "rg":
        return _flag(args, long=("--pre", "--hostname-bin"))
    return False


# -- critical removals ------------------------------------------------------------------

_EXPANSION = re.compile(r"\$\{[^}]*\}|\$\([^()]*\)|`[^`]*`|\$[A-Za-z_]\w*|\$[@*#?$!0-9-]")
_TRAILING_EXPANSION = re.compile(
    r"(?:\$\{[^}]*\}|\$\([^()]*\)|`[^`]*`|\$[A-Za-z_]\w*|\$[@*#?$!0-9-])/*(?:\*|\.\*)?/*$")
_HOME_VAR = re.compile(r"\$\{HOME\}|\$HOME(?!\w)")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
_USER_HOME = re.compile(r"~[\w.-]+/*")


def critical_removal(cmd: SimpleCommand, *, cwd: str, home: str) -> str | None:
    """Why removing these targets is never auto-approved (`/`, home, cwd ...), or None."""
    inner = cmd.inner()
    if not inner.argv:
        return None
    name = os.path.basename(inner.argv[0])
    cut = len(cmd.argv) - len(inner.argv)
    if name in ("rm", "rmdir"):
        if "xargs" in map(os.path.basename, cmd.argv[:cut]):
            return f"`{name}` through xargs removes paths read from input, which cannot be checked"
        targets = _rm_targets(inner)
    elif name == "find" and _find_removes(inner.argv):
        targets = _find_paths(inner)
    else:
        return None
    cwd, home = _norm(cwd), _norm(home)
    for text, dynamic in targets:
        reason = _critical_word(text, dynamic, cwd, home)
        if reason:
            return f"`{name}` would remove {reason}"
    return None


def _rm_targets(inner: SimpleCommand) -> list[tuple[str, bool]]:
    out, options = [], True
    for arg, dynamic in zip(inner.argv[1:], inner.dynamic[1:], strict=True):
        if options and arg == "--":
            options = False
        elif not (options and arg.startswith("-") and arg != "-" and not dynamic):
            out.append((arg, dynamic))
    return out


def _find_removes(argv: Args) -> bool:
    if "-delete" in argv:
        return True
    return any(a in _FIND_EXEC and i + 1 < len(argv)
               and os.path.basename(argv[i + 1]) in ("rm", "rmdir")
               for i, a in enumerate(argv))


def _find_paths(inner: SimpleCommand) -> list[tuple[str, bool]]:
    """The start paths of `find` (after -H/-L/-P, before the first expression word)."""
    pairs = list(zip(inner.argv[1:], inner.dynamic[1:], strict=True))
    while pairs and pairs[0][0] in ("-H", "-L", "-P"):
        pairs.pop(0)
    out = []
    for arg, dynamic in pairs:
        if arg.startswith("-") or arg in ("(", "!", ")", ","):
            break
        out.append((arg, dynamic))
    return out or [(".", False)]


def _critical_word(text: str, dynamic: bool, cwd: str, home: str) -> str | None:
    """Check a target word; an expansion that may be empty is checked as empty."""
    if dynamic:
        text = _HOME_VAR.sub(lambda _: home, text.replace('"', "").replace("'", ""))
        if _EXPANSION.search(text):
            empty = _EXPANSION.sub("", text)
            if empty and _TRAILING_EXPANSION.search(text) and _critical_path(empty, cwd, home):
                return f"{text!r}: with an empty variable it is {empty!r}"
            return None
    for alternative in _expand_braces(text):
        reason = _critical_path(alternative, cwd, home)
        if reason:
            return reason
    return None


def _expand_braces(text: str, limit: int = 64) -> list[str]:
    match = _BRACES.search(text)
    if not match:
        return [text]
    out: list[str] = []
    for part in match.group(1).split(","):
        out += _expand_braces(text[:match.start()] + part + text[match.end():], limit)
        if len(out) >= limit:
            break
    return out[:limit]


def _critical_path(path: str, cwd: str, home: str) -> str | None:
    if not path:
        return None
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    elif path.startswith("~"):
        return f"{path!r}, a user's home directory" if _USER_HOME.fullmatch(path) else None
    parts = path.split("/")
    for i, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            parent = "/".join(parts[:i]) or ("/" if path.startswith("/") else ".")
            where = _critical_dir(_resolve(parent, cwd), cwd, home, contents=True)
            return f"{path!r}, which matches everything in {where}" if where else None
    where = _critical_dir(_resolve(path, cwd), cwd, home, contents=False)
    return f"{path!r}, {where}" if where else None


def _critical_dir(path: str, cwd: str, home: str, *, contents: bool) -> str | None:
    """Why `path` (or, with `contents`, everything inside it) is critical."""
    if path == "/":
        return "the root directory"
    if os.path.dirname(path) == "/":
        return f"the top-level directory {path}"
    if path == home:
        return "the home directory"
    if _is_ancestor(path, home):
        return f"{path}, which contains the home directory"
    if path == cwd and not contents:
        return "the current working directory"
    if _is_ancestor(path, cwd):
        return f"{path}, which contains the current working directory"
    return None


def _norm(path: str) -> str:
    path = os.path.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


def _resolve(path: str, cwd: str) -> str:
    return _norm(os.path.join(cwd, path))


def _is_ancestor(parent: str, child: str) -> bool:
    return parent != child and child.startswith(parent.rstrip("/") + "/")
