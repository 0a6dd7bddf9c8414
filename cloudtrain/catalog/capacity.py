"""Is an error "no capacity", "no quota", "slow down", or something else? The clouds' wordings are data
(``data/capacity_errors.json``); capacity and quota move a job to its next fallback, a rate limit is
retried where it happened, anything else is the job's own failure and never a reason to move."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from cloudtrain.catalog import _data

Kind = Literal["capacity", "quota", "rate"]
_ORDER: tuple[Kind, ...] = ("rate", "capacity", "quota")  # a rate limit worded like a quota is a rate limit


def _rules() -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = _data.load("capacity_errors")["rules"]  # the catalog's reader, no importlib
    return rules


def classify(cloud: str, text: str, reasons: Iterable[str] = ()) -> Kind | None:
    """The kind of a refusal or failure, from its message and (Google's ``ErrorInfo``) reasons."""
    reasons = {r for r in reasons if r}
    rules = [r for r in _rules() if r["cloud"] == cloud]
    for kind in _ORDER:
        for rule in (r for r in rules if r["kind"] == kind):
            if reasons & set(rule.get("reasons", ())) or re.search(rule["pattern"], text or ""):
                return kind
    return None


def moves_on(cloud: str, text: str, reasons: Iterable[str] = ()) -> bool:
    """True for capacity and quota: the next candidate may have what this one lacked."""
    return classify(cloud, text, reasons) in ("capacity", "quota")
