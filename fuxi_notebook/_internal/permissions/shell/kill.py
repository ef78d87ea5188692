"""Would a command kill the agent itself (the Python/Jupyter kernel it runs in)?

`pkill -f python` from inside a kernel kills the kernel, and with it the run. The caller
passes the command lines and pids of the agent's own processes (kernel, its parents).
"""

from __future__ import annotations

import os
import re

from .model import SimpleCommand

__all__ = ["kills_own_process"]

_SIGNAL = re.compile(r"-(?:\d+|(?:SIG)?[A-Z]{2,}[A-Z0-9+-]*)")  # -9, -KILL, -SIGRTMIN+1
_VALUE_SHORT = {"pkill": "sPgGuUtF", "killall": "suoynZ"}
_RELATION_SHORT = {"pkill": "sPgF", "killall": ""}  # session, parent, group, pidfile
_SIGNAL_OPTIONS = {"pkill": ("--signal",), "killall": ("-s", "--signal")}
_VALUE_LONG = frozenset({
    "--signal", "--euid", "--uid", "--group", "--terminal", "--session", "--parent",
    "--pgroup", "--pidfile", "--ns", "--nslist", "--older", "--cgroup", "--env", "--user",
    "--older-than", "--younger-than", "--context",
})
_RELATION_LONG = frozenset({"--session", "--parent", "--pgroup", "--pidfile"})
_MODES = {  # meaning -> options, per tool
    "pkill": {"full": {"-f", "--full"}, "exact": {"-x", "--exact"},
              "icase": {"-i", "--ignore-case"}, "regex": set()},
    "killall": {"full": set(), "exact": {"-e", "--exact"}, "icase": {"-I", "--ignore-case"},
                "regex": {"-r", "--regexp"}},
}


def kills_own_process(cmd: SimpleCommand, *, own_cmdlines: list[str],
                      own_pids: list[int]) -> str | None:
    """A reason when `kill`/`pkill`/`killall`/`jupyter ... stop` may hit the agent, else None."""
    inner = cmd.inner()
    if not inner.argv:
        return None
    name = os.path.basename(inner.argv[0])
    stripped = map(os.path.basename, cmd.argv[:len(cmd.argv) - len(inner.argv)])
    if name in ("kill", "pkill", "killall") and "xargs" in stripped:
        return f"`{name}` through xargs takes its targets from input, which cannot be checked"
    if name == "kill":
        return _kill(inner, own_pids)
    if name in ("pkill", "killall"):
        return _pkill(inner, name, own_cmdlines, own_pids)
    if name == "killall5":
        return "`killall5` signals every process, including this agent"
    if name == "fuser" and any(a == "--kill" or (a[:1] == "-" and a[1:2] != "-" and "k" in a)
                               for a in inner.argv[1:]):
        return "`fuser -k` kills every process using the file or port, possibly this agent"
    if name == "jupyter" or name.startswith("jupyter-"):
        return _jupyter((name[8:], *inner.argv[1:]) if name != "jupyter" else inner.argv[1:])
    return None


def _kill(inner: SimpleCommand, own_pids: list[int]) -> str | None:
    args = list(zip(inner.argv[1:], inner.dynamic[1:], strict=True))
    if args and not args[0][1]:
        first = args[0][0]
        if first in ("-l", "-L") or first.startswith("--list"):
            return None
        if first in ("-s", "-n", "--signal"):
            args = args[2:]
        elif first.startswith("--signal=") or _SIGNAL.fullmatch(first):
            args = args[1:]
    if args and args[0] == ("--", False):
        args = args[1:]
    for arg, dynamic in args:
        if dynamic:
            return f"`kill {arg}`: the process id is an expansion and may be this agent's"
        if arg in ("0", "-0"):
            return "`kill 0` signals this agent's whole process group"
        if arg == "-1":
            return "`kill -1` signals every process of the user, including this agent"
        if re.fullmatch(r"-\d+", arg):
            return f"`kill {arg}` signals a whole process group, possibly this agent's"
        if arg.isdigit() and int(arg) in own_pids:
            return f"`kill {arg}` targets this agent's own process"
    return None


def _pkill(inner: SimpleCommand, name: str, cmdlines: list[str],
           pids: list[int]) -> str | None:
    """Parse options, then match each pattern the way the tool does."""
    modes: set[str] = set()
    patterns: list[str] = []
    selections = 0
    args = list(zip(inner.argv[1:], inner.dynamic[1:], strict=True))
    i = 0
    while i < len(args):
        arg, dynamic = args[i]
        i += 1
        if dynamic:
            return f"`{name}` argument {arg!r} is an expansion and may select this agent"
        if arg == "--":
            patterns += [a for a, _ in args[i:]]
            break
        if not arg.startswith("-") or arg == "-":
            patterns.append(arg)
            continue
        if _SIGNAL.fullmatch(arg):
            continue
        options, value, i = _option(arg, args, i, name)
        if value is None:
            modes.update(options)
            continue
        modes.update(options[:-1])
        selections += options[-1] not in _SIGNAL_OPTIONS[name]
        reason = _relation(options[-1], value, name, pids)
        if reason:
            return reason
    if not patterns:
        return f"`{name}` without a pattern selects all matching processes" if selections else None
    return _match_patterns(name, patterns, modes, cmdlines)


def _option(arg: str, args: list[tuple[str, bool]], i: int,
            name: str) -> tuple[list[str], str | None, int]:
    """(options, the value of the last one or None if it takes none, next index)."""
    if arg.startswith("--"):
        key, eq, value = arg.partition("=")
        if key not in _VALUE_LONG:
            return [key], None, i
        if not eq:
            value, i = (args[i][0], i + 1) if i < len(args) else ("", i)
        return [key], value, i
    flags: list[str] = []
    for j, char in enumerate(arg[1:], 2):
        if char in _VALUE_SHORT[name]:
            value = arg[j:]
            if not value:
                value, i = (args[i][0], i + 1) if i < len(args) else ("", i)
            return [*flags, "-" + char], value, i
        flags.append("-" + char)
    return flags, None, i


def _relation(option: str, value: str, name: str, pids: list[int]) -> str | None:
    """`pkill -s 0`, `-g 0`, `-P <own pid>`, `-F file` can select the agent itself."""
    if option not in _RELATION_LONG and option[1:] not in _RELATION_SHORT[name]:
        return None
    if option in ("-F", "--pidfile"):
        return f"`{name} {option}` reads process ids from a file, which cannot be checked"
    for part in value.split(","):
        if part == "0" or (part.isdigit() and int(part) in pids):
            return f"`{name} {option} {value}` selects this agent's session, group or children"
    return None


def _match_patterns(name: str, patterns: list[str], modes: set[str],
                    cmdlines: list[str]) -> str | None:
    has = {meaning: bool(opts & modes) for meaning, opts in _MODES[name].items()}
    regex = name == "pkill" or has["regex"]
    flags = re.IGNORECASE if has["icase"] else 0
    for pattern in patterns:
        for cmdline in cmdlines:
            subject = cmdline if has["full"] else _process_name(cmdline)
            hit: re.Match[str] | bool | None
            if regex:
                try:
                    rx = re.compile(pattern, flags)
                except re.error:
                    return f"`{name} {pattern}`: the pattern cannot be checked"
                hit = (rx.fullmatch if has["exact"] else rx.search)(subject)
            else:
                hit = _same_name(pattern, subject, flags)
            if hit:
                return f"`{name} {pattern}` matches this agent's own process ({cmdline!r})"
    return None


def _process_name(cmdline: str) -> str:
    """The name pkill and killall see: the executable's basename, cut to 15 characters."""
    words = cmdline.split()
    return os.path.basename(words[0])[:15] if words else ""


def _same_name(pattern: str, name: str, flags: int) -> bool:
    if flags:
        pattern, name = pattern.lower(), name.lower()
    return pattern == name or (len(pattern) >= 15 and pattern[:15] == name)


def _jupyter(args: tuple[str, ...]) -> str | None:
    if args[:1] == ("kernel",):
        return "`jupyter kernel` commands can stop the kernel this agent runs in"
    if args[:1] and args[0] in ("notebook", "server", "lab", "nbclassic") and "stop" in args:
        return f"`jupyter {args[0]} stop` stops the server of the kernel this agent runs in"
    return None
