"""The config formats Vertex AI reads besides cloudtrain's own, for ``Backend.translate``.

A Vertex ``CustomJobSpec`` (:mod:`.customjob`) and an AI Platform / ML Engine ``trainingInput``
document (:mod:`.mlengine`; gcloud's command lines become one of the two: :mod:`.gcloud`).
``config.load`` reaches them through the registry, so the core names neither."""

from __future__ import annotations

from typing import Any

from cloudtrain.backends.vertex import customjob, mlengine
from cloudtrain.config.yaml12 import LoadedYaml


def translate(loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]] | None:
    """``loaded`` as cloudtrain's keys and the notes on what was mapped; None: in neither format.

    A ``CustomJobSpec`` is read first; what it becomes is read as ML Engine's in case it is one."""
    notes: list[str] = []
    translated = False
    if customjob.is_custom_job(loaded.data):
        loaded.data, more = customjob.convert(loaded)
        notes += more
        translated = True
    if mlengine.is_legacy(loaded.data):
        loaded.data, more = mlengine.convert(loaded)
        notes += more
        translated = True
    return (loaded.data, notes) if translated else None
