"""The one ``mapped:`` line: a setting replaced by its nearest, why, and what that does to the price.

Every translation says what it changed in this one format — legacy ML Engine configs and
commands, Vertex ``CustomJobSpec`` files, a config moved to the other cloud, a fallback
candidate on another backend::

    mapped: <key>: <from> → <to> (<reason>); $X.XX/h → $Y.YY/h

The price part is there for machines (``(no current price)`` where a side has none, such as a
retired GPU) and left out for what has no price of its own (a TensorFlow version, a region).
``--strict-legacy`` turns every such line into an error. No cloud names are needed here: the
callers say what was mapped and why.
"""

from __future__ import annotations

from cloudtrain.text.numbers import money

PREFIX = "mapped: "
NO_PRICE = "(no current price)"


def mapped_line(
    key: str, was: object, now: object, reason: str, prices: tuple[float | None, float | None] | None = None
) -> str:
    """``mapped: machine.type: a → b (why); $1.00/h → $2.00/h``; ``prices`` None: a mapping without a price."""
    line = f"{PREFIX}{key}: {was} → {now} ({reason})"
    if prices is not None:
        line += "; " + " → ".join(NO_PRICE if p is None else f"{money(p)}/h" for p in prices)
    return line
