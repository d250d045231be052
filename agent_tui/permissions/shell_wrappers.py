"""What a command runs in turn: wrappers, shells' ``-c`` scripts, ``eval``, ``find -exec``.

:func:`inner` reads one simple command's words and says what else it runs: the
command after a wrapper's options (``timeout -s KILL 5 rm x`` runs ``rm x``), a
script a shell or ``eval`` runs (``bash -lc 'rm x'``), or that a shell reads its
commands from its input (``bash <<< 'rm x'``, ``... | sh``).

Options are read from a table per wrapper: which take a value, and how many
arguments come before the command (``timeout``'s duration, ``chrt``'s priority).
An option the table does not know is read both ways (with and without a value), so
an unknown option widens what deny rules see and never hides the command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_tui.permissions.shell_model import Word

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, slots=True)
class Wrapper:
    """How a wrapper's options read: short options taking a value, long ones taking a
    value, short flags (known to take none), arguments before the command."""

    values: str = ""
    long_values: frozenset[str] = frozenset()
    flags: str = ""
    positionals: int = 0
    assignments: bool = False  # NAME=value words before the command (env, sudo)
    script_option: str = ""  # the option whose value is a shell script (su -c)


def _w(values: str = "", long_values: str = "", flags: str = "", positionals: int = 0,
       assignments: bool = False, script_option: str = "") -> Wrapper:
    return Wrapper(values, frozenset(long_values.split()), flags, positionals, assignments,
                   script_option)


#: Programs that run the command after their options (a deny rule sees through them).
WRAPPERS: dict[str, Wrapper] = {
    "env": _w("uCS", "--unset --chdir --split-string --block-signal --default-signal "
              "--ignore-signal", "i0v", assignments=True, script_option="S"),
    "sudo": _w("ugpCDhrtTUR", "--user --group --prompt --chdir --close-from --host --role "
               "--type --other-user --command-timeout", "AbEeHiKklnPSsVv", assignments=True),
    "doas": _w("uC", flags="nsL"),
    "su": _w("sgGw", "--shell --group --supp-group --whitelist-environment", "lmpfP",
             script_option="c", positionals=0),
    "runuser": _w("ugGsw", "--user --group --supp-group --shell --whitelist-environment",
                  "lmpfP", script_option="c"),
    "nice": _w("n", "--adjustment"),
    "ionice": _w("cnp", "--class --classdata --pid --pgid --uid", "t"),
    "timeout": _w("sk", "--signal --kill-after", "v", positionals=1),
    "nohup": _w(),
    "time": _w("fo", "--format --output", "apqv"),
    "command": _w(flags="pvV"),
    "builtin": _w(),
    "exec": _w("a", flags="cl"),
    "xargs": _w("adEILnPs", "--arg-file --delimiter --eof --replace --max-lines --max-args "
                "--max-procs --max-chars --process-slot-var", "0oprtx"),
    "stdbuf": _w("ioe", "--input --output --error"),
    "setsid": _w(flags="cfw"),
    "chrt": _w("TPD", "--sched-runtime --sched-period --sched-deadline", "abdefiorRv",
               positionals=1),
    "taskset": _w(flags="acp", positionals=1),
    "nsenter": _w("tSG", "--target --setuid --setgid --wd --root", "amuinpUCFr"),
    "unshare": _w(flags="muinpUCfr"),
    "flock": _w("wEc", "--timeout --conflict-exit-code --command", "sxunoF", positionals=1,
                script_option="c"),
    "chroot": _w(long_values="--userspec --groups", positionals=1),
    "strace": _w("eopsuEIPSXbU", flags="cdfFhiqrtTvVwxyzCDkn"),
    "ltrace": _w("eopsuEnaSl", flags="bcCdfhirStTVw"),
    "fakeroot": _w("ls", "--lib --faked -i -s", "u"),
    "unbuffer": _w(flags="p"),
    "caffeinate": _w("tw", flags="dimsu"),
    "watch": _w("nqs", "--interval --equexit --shell", "bcdeghptrwx"),
    "script": _w("cEIOBTm", "--command --echo --log-in --log-out --log-io --log-timing",
                 "aefqk", script_option="c"),
    "systemd-run": _w("upEM", "--unit --property --setenv --machine --uid --gid "
                      "--working-directory", "qrtGS"),
    "firejail": _w(),
    "proot": _w("rbwq"),
}

#: Programs whose arguments are a shell script: ``eval rm x``, ``trap 'rm x' EXIT``.
SCRIPT_RUNNERS = frozenset({"eval", "trap"})
#: Shells: ``-c SCRIPT`` runs a script; with neither ``-c`` nor a file they read their input.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "fish",
                    "rbash", "yash", "posh", "tcsh", "csh"})
_SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
#: ``find``'s actions that run a command: the words up to ``;`` or ``+``.
FIND_EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True, slots=True)
class Inner:
    """One thing a command runs in turn: a command (``words``), a shell script
    (``script``), or commands read from its input (``reads_input``)."""

    words: tuple[Word, ...] = ()
    script: Word | None = None
    reads_input: bool = False
    via: str = ""


def inner(words: tuple[Word, ...]) -> list[Inner]:
    """What the command ``words`` runs in turn (empty: nothing the judge knows of)."""
    if not words:
        return []
    name = words[0].text.rsplit("/", 1)[-1]
    args = words[1:]
    if name == "busybox" and args:
        return [Inner(words=args, via=name)]
    if name == "coproc":  # `coproc NAME cmd`, `coproc { cmd; }`: the grammar reads words
        return [Inner(words=args[i:], via=name) for i in range(min(3, len(args)))]
    if name in SHELLS:
        return _shell(name, args)
    if name in SCRIPT_RUNNERS:
        return _script_runner(name, args)
    if name == "find":
        return _find_execs(args)
    spec = WRAPPERS.get(name)
    if spec is None:
        return []
    found: list[Inner] = []
    if spec.script_option:
        found += [Inner(script=w, via=name) for w in _option_values(args, spec.script_option)]
    if name == "watch":  # watch joins its words and runs them with sh -c
        return found + [Inner(script=_joined(args[i:]), via=name)
                        for i in _starts(spec, args)]
    return found + [Inner(words=args[i:], via=name) for i in _starts(spec, args)]


def _shell(name: str, args: tuple[Word, ...]) -> list[Inner]:
    i = 0
    command_string = False
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if text in _SHELL_VALUES:
            i += 2
            continue
        if text.startswith("--") or (text[:1] in "-+" and len(text) > 1):
            if not text.startswith("--") and "c" in text[1:]:
                command_string = True
            if not text.startswith("--") and "s" in text[1:]:
                return [Inner(reads_input=True, via=name)]
            i += 1
            continue
        break
    if command_string:
        return [Inner(script=args[i], via=f"{name} -c")] if i < len(args) else []
    if i >= len(args):
        return [Inner(reads_input=True, via=name)]
    return []  # a script file: not read


def _script_runner(name: str, args: tuple[Word, ...]) -> list[Inner]:
    if name == "trap":
        body = [w for w in args if not w.text.startswith("-")][:1]
        return [Inner(script=body[0], via=name)] if body else []
    return [Inner(script=_joined(args), via=name)] if args else []


def _joined(words: tuple[Word, ...]) -> Word:
    return Word(" ".join(w.text for w in words), all(w.static for w in words))


def _find_execs(args: tuple[Word, ...]) -> list[Inner]:
    found: list[Inner] = []
    for i, word in enumerate(args):
        if word.text in FIND_EXECS:
            end = next((j for j in range(i + 1, len(args)) if args[j].text in {";", "+"}),
                       len(args))
            if end > i + 1:
                found.append(Inner(words=args[i + 1 : end], via=f"find {word.text}"))
    return found


def _option_values(args: tuple[Word, ...], letter: str) -> list[Word]:
    """The values of ``-c VALUE``, ``-cVALUE``, ``--command=VALUE`` (su, script, flock)."""
    long = {"c": "--command", "S": "--split-string"}.get(letter, "")
    found: list[Word] = []
    for i, word in enumerate(args):
        text = word.text
        if long and text.startswith(long + "="):
            found.append(Word(text.split("=", 1)[1], word.static))
        elif (long and text == long) or (text.startswith("-") and not text.startswith("--")
                                          and text.endswith(letter) and len(text) > 1):
            if i + 1 < len(args):
                found.append(args[i + 1])
        elif text.startswith("-" + letter) and len(text) > 2:
            found.append(Word(text[2:], word.static))
    return found


def _starts(spec: Wrapper, args: tuple[Word, ...]) -> list[int]:
    """Where the wrapped command may start: every reading of the options."""
    starts: set[int] = set()
    seen: set[tuple[int, int]] = set()
    todo = [(0, spec.positionals)]
    while todo:
        i, left = todo.pop()
        if (i, left) in seen or i >= len(args):
            continue
        seen.add((i, left))
        text = args[i].text
        if text == "--":
            todo.append((i + 1, left))
        elif text.startswith("-") and len(text) > 1:
            todo += [(n, left) for n in _after_option(spec, text, i)]
        elif spec.assignments and _ASSIGNMENT.match(text):
            todo.append((i + 1, left))
        elif left:
            todo.append((i + 1, left - 1))
        else:
            starts.add(i)
    return sorted(starts)


def _after_option(spec: Wrapper, text: str, i: int) -> list[int]:
    """Where the next word may be after the option at ``i`` (both, when unsure)."""
    if text.startswith("--"):
        if "=" in text or text in {"--" + f for f in ("null", "verbose")}:
            return [i + 1]
        return [i + 2] if text in spec.long_values else [i + 1, i + 2]
    for pos, letter in enumerate(text[1:], start=1):
        if letter in spec.values:
            return [i + 1] if pos < len(text) - 1 else [i + 2]
        if letter not in spec.flags:
            return [i + 1, i + 2]
    return [i + 1]
