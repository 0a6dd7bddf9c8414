"""One function per place a value is written on the cluster: an ``#SBATCH`` directive, a comment, a shell word.

Each value is quoted where it is written, never substituted into text that was quoted before. The config
checks refuse control characters in every string that can get here (:mod:`cloudtrain.config.control_chars`);
these refuse them again, so a spec built another way (the Python API) cannot end the line it is written on.
A shell word is :func:`shlex.quote`, at the point of use.
"""

from __future__ import annotations

import re

from cloudtrain.errors import UsageError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: What sbatch's script parser reads as syntax: blanks split arguments, quotes and ``\`` quote, ``#`` starts a comment.
_SBATCH_SPECIAL = re.compile(r"[\s\"'\\#]")


def one_line(value: str, what: str) -> str:
    """``value``, refused if it holds a control character (a newline would end the line it is written on)."""
    if _CONTROL.search(value):
        raise UsageError(f"{what} {value!r} holds a control character", "remove it (newline, tab, …)")
    return value


def option(name: str, value: object) -> str:
    """``--name=value`` as an ``#SBATCH`` line's argument that sbatch reads back as exactly ``value``."""
    text = one_line(str(value), name)
    if _SBATCH_SPECIAL.search(text):
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{name}={text}"


def filename(path: str) -> str:
    """A literal path in a Slurm filename pattern (``--output``): its own ``%`` doubled."""
    return path.replace("%", "%%")


def comment(text: str) -> str:
    """A ``#`` comment line."""
    return "# " + one_line(text, "a comment")


def sbatch_arguments(line: str) -> list[str]:
    """The arguments sbatch reads from one ``#SBATCH`` line (its script parser): split at blanks, quotes and
    ``\\`` honoured, an unquoted ``#`` ends the line; a blank ends an argument even after a ``\\``."""
    args: list[str] = []
    word, quote, escaped, started = "", "", False, False
    for ch in line:
        if ch.isspace() and not quote:
            if started:
                args.append(word)
            word, escaped, started = "", False, False
        elif escaped:
            word, escaped = word + ch, False
        elif ch == "\\":
            escaped = started = True
        elif quote and ch == quote:
            quote = ""
        elif quote or ch not in "\"'#":
            word, started = word + ch, True
        elif ch == "#":
            break
        else:  # a quote opens
            quote, started = ch, True
    return [*args, word] if started else args
