"""What cloudtrain shows and stores of a job's values: anything that looks secret (by name, or a known credential's
form in ``formats.json``) is ``***``. For display only: ``env:`` is sent as written."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

MASK = "***"
_INTERPOLATION = re.compile(r"\$\{[^}]*\}|^\$[A-Za-z_][A-Za-z0-9_]*$")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_PLAIN = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|true|false|True|False|none|None|null")
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|Private-MAC:")


class Format(NamedTuple):
    """One ``formats.json`` credential format, compiled only when a text holds a hint (all 29 cost a dry run 6 ms)."""

    name: str
    source: str
    flags: int
    hints: tuple[str, ...]

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source, self.flags)


@functools.cache
def _compiled(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)


class Rules(NamedTuple):
    """``formats.json``, compiled: the credential formats and the name rules."""

    formats: tuple[Format, ...]
    env_name: re.Pattern[str]
    env_words: frozenset[str]
    option_words: frozenset[str]
    key_words: frozenset[str]


@functools.cache
def rules() -> Rules:
    """The rules of ``formats.json`` (read once, when something is first masked)."""
    doc = json.loads(Path(__file__).with_name("formats.json").read_text(encoding="utf-8"))
    formats = tuple(
        Format(
            rule["name"],
            rule["pattern"],
            re.IGNORECASE if "i" in rule.get("flags", "") else 0,
            tuple(rule["hints"]),
        )
        for rule in doc["rules"]
    )
    names = doc["names"]
    return Rules(
        formats=formats,
        env_name=re.compile("|".join(map(re.escape, names["env"])), re.IGNORECASE),
        env_words=frozenset(names["env_words"]),
        option_words=frozenset(names["option_words"]),
        key_words=frozenset(names["key_words"]),
    )


def _words(name: str) -> list[str]:
    """``DB_PASS`` → ``["DB", "PASS"]``; ``apiKey`` → ``["API", "KEY"]``; ``--hf-token`` → ``["HF", "TOKEN"]``."""
    return [w.upper() for w in _WORDS.findall(name)]


def secret_name(name: str) -> bool:
    """Whether an ``env:`` variable called ``name`` holds a secret, whatever its value."""
    r = rules()
    return bool(r.env_name.search(name)) or not r.env_words.isdisjoint(_words(name))


def secret_option(name: str) -> bool:
    """Whether an option (``--api-key``, a hyperparameter ``hf_token``) holds a secret. Stricter than
    :func:`secret_name`: ``key_dim``, ``max_tokens`` and ``tokenizer`` are settings, not secrets."""
    r = rules()
    words = _words(name)
    return not r.option_words.isdisjoint(words) or any(
        w == "KEY" and i > 0 and words[i - 1] in r.key_words for i, w in enumerate(words)
    )


@functools.cache
def _hints() -> tuple[tuple[str, int], ...]:
    return tuple((hint, number) for number, f in enumerate(rules().formats) for hint in f.hints)


def _candidates(text: str) -> list[Format]:
    """The formats worth trying on ``text``: those one of whose hints it holds (most log lines: none)."""
    lowered = text.lower()
    found = {number for hint, number in _hints() if hint in lowered}
    formats = rules().formats
    return [formats[number] for number in sorted(found)]


def has_credential(text: str) -> bool:
    """Whether ``text`` holds something of a known credential format."""
    return any(f.pattern.search(text) for f in _candidates(text))


def _replace(match: re.Match[str]) -> str:
    """A match as ``***``; where its rule names a ``secret`` group, that group alone."""
    if "secret" not in match.re.groupindex or match.group("secret") is None:
        return MASK
    whole, (start, end) = match.group(0), match.span("secret")
    return whole[: start - match.start()] + MASK + whole[end - match.start() :]


def mask_text(text: str) -> str:
    """``text`` with every credential of a known format as ``***`` (a URL's password only, a token or key whole)."""
    if not text:
        return text
    for f in _candidates(text):
        text = f.pattern.sub(_replace, text)
    return text


def looks_secret(name: str, value: str) -> bool:
    """Whether ``name=value`` should be shown as ``***``."""
    return secret_name(name) or has_credential(value)


def secret_names(env: Mapping[str, str]) -> list[str]:
    """The variables of ``env`` whose values are masked, in order."""
    return [name for name, value in env.items() if looks_secret(name, str(value))]


def _hidden_option(name: str, value: object) -> bool:
    """A secret-named option's value is hidden unless it is a plain number or boolean (``max_tokens=512``)."""
    return secret_option(name) and not (isinstance(value, (int, float, bool)) or _PLAIN.fullmatch(str(value)))


def mask_args(args: Sequence[str]) -> list[str]:
    """``["--api-key=sk-…", "--password", "pw", "--lr=0.1"]`` → ``["--api-key=***", "--password", "***", "--lr=0.1"]``:
    the value of a secret-named option (``--name=value`` or ``--name value``), and any credential."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next and not arg.startswith("-"):
            out.append(MASK if not _PLAIN.fullmatch(arg) else arg)
            hide_next = False
            continue
        hide_next = False
        flag, eq, value = arg.partition("=")
        if arg.startswith("-") and eq and _hidden_option(flag, value):
            out.append(f"{flag}={MASK}")
            continue
        hide_next = arg.startswith("-") and not eq and secret_option(arg)
        out.append(mask_text(arg))
    return out


def secret_values(
    env: Mapping[str, Any] = {}, args: Sequence[str] = (), hyperparameters: Mapping[str, Any] = {}
) -> list[str]:
    """The values a job holds that are secret by their name (or form): ``env:`` values, the values of
    secret-named options in ``args``, secret-named hyperparameters. What a :class:`ValueMasker` hides."""
    values = [str(env[name]) for name in secret_names({k: str(v) for k, v in env.items()})]
    for arg, shown in zip(args, mask_args(args), strict=True):
        if shown != arg and shown.endswith(MASK):
            values.append(arg[len(shown) - len(MASK) :])
    values += [str(v) for k, v in hyperparameters.items() if _hidden_option(k, v)]
    return values


def env_warnings(env: Mapping[str, str]) -> list[str]:
    """One line for the secret-looking values of ``env:`` (if any), one per ``${…}`` value."""
    lines = []
    names = secret_names(env)
    if names:
        lines.append(
            f"env: {', '.join(names)} "
            + ("looks like a secret:" if len(names) == 1 else "look like secrets:")
            + " env: values are written into the job's request, where anyone who can read jobs sees them"
            " (cloudtrain shows them as ***); refer to them under secrets: instead (docs/how-to/secrets.md)"
        )
    for name, value in env.items():
        if found := _INTERPOLATION.search(str(value)):
            var = re.sub(r"[${}]", "", found.group(0)).split(":")[0] or "VAR"
            shown = MASK if name in names else repr(value)
            lines.append(
                f"env: {name}: {shown} is sent as written (cloudtrain does not expand ${{…}}); for a value "
                f"from your shell or a secret store use secrets: ({name}: shell:{var} for --local; "
                "docs/how-to/secrets.md)"
            )
    return lines


def mask_document(doc: Any, names: Iterable[str], values: Iterable[str] = ()) -> Any:
    """A request (any JSON-like document) with ``***`` for the values of variables ``names`` (``{"NAME": value}`` and
    ``{"name": NAME, "value": value}`` forms), for ``values`` in any string (a local ``CLUSTER_SPEC``), and for every
    known credential format."""
    names = set(names)
    masker = ValueMasker(values)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("name") in names and isinstance(node.get("value"), str) and set(node) <= {"name", "value"}:
                return {**node, "value": MASK}
            return {k: MASK if k in names and isinstance(v, str) else walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return masker(node) if isinstance(node, str) else node

    return walk(doc)


def mask_spec_document(
    doc: Any, env: Mapping[str, str], *, args: Sequence[str] = (), hyperparameters: Mapping[str, Any] = {}
) -> Any:
    """``doc`` (a rendered request) with its job's secret-looking ``env:`` values masked, and its secret-named options
    and hyperparameters wherever they stand (JSON-encoded, ``--name=value``)."""
    return mask_document(doc, secret_names(env), secret_values(env, args, hyperparameters))


def masked(node: Any, mask: ValueMasker) -> Any:
    """``node`` with every text in it masked, at any depth (a list of lines as one stream: a key's every line)."""
    if type(node) is str:
        return mask(node)
    if isinstance(node, Mapping):
        return {key: masked(value, mask) for key, value in node.items()}
    if isinstance(node, (list, tuple)):
        lines = mask.stream()
        return [lines(item) if type(item) is str else masked(item, mask) for item in node]
    return node


def masked_repr(obj: Any, values: Iterable[str]) -> str:
    """A dataclass's ``repr`` with ``values`` and every credential masked (``repr(load_config(...))``)."""
    from dataclasses import fields

    shown = ", ".join(f"{f.name}={getattr(obj, f.name)!r}" for f in fields(obj) if f.repr)
    return ValueMasker(values)(f"{type(obj).__qualname__}({shown})")


class ValueMasker:
    """Replaces known secret values (also line by line, as a printed key arrives) and every known credential format in
    text with ``***``. :meth:`stream` masks a private key's body after its first line, whatever the key."""

    def __init__(self, values: Iterable[str]):
        # longest first, so a value containing another is masked whole; very short ones not ("1" would wreck lines)
        forms: set[str] = set()
        for value in values:
            value = str(value)
            forms.add(value)
            forms.add(json.dumps(value)[1:-1])  # as a JSON string holds it (a request, replicas.json)
            forms.add(repr(value)[1:-1])  # as a repr shows it
            forms.update(line.strip() for line in value.splitlines())
        self._values = sorted({v for v in forms if len(v) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return mask_text(text)

    def stream(self) -> Callable[[str], str]:
        """A masker for one stream's lines: also masks a private key (PEM or PuTTY) from its BEGIN to END line."""
        inside = [False]

        def mask(line: str) -> str:
            if inside[0]:
                if _PEM_END.search(line):
                    inside[0] = False
                return MASK + ("\n" if line.endswith("\n") else "")
            begun = _PEM_BEGIN.search(line)
            if begun and not _PEM_END.search(line, begun.end()):
                inside[0] = True
            return self(line)

        return mask


def mask_logs(values: Iterable[str], logger: str = "cloudtrain") -> None:
    """Mask ``values`` (and every credential) in every line ``logger``'s handlers print (``--debug`` included)."""
    masker = ValueMasker(values)

    def hide(record: logging.LogRecord) -> bool:
        record.msg, record.args = masker(record.getMessage()), None
        return True

    for handler in logging.getLogger(logger).handlers:
        handler.addFilter(hide)
