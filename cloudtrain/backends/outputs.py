"""Outputs where the platform keeps them: an empty model dir at the end of a run is a warning.

SageMaker keeps only ``SM_MODEL_DIR`` and Vertex only ``AIP_MODEL_DIR`` as the model; the disk is thrown away, so a
run that saved elsewhere succeeds and leaves nothing. :func:`empty_model_dir_warning` looks on this machine (new
files under the output dir, a replica's working folder included, and ``/opt/ml``); the cloud backends list their
output location and pass it to :func:`model_warning`."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from cloudtrain.backends import get_backend

_BOOKKEEPING = {"status.json", "replicas.json"}


def empty_model_dir_warning(
    model_dir: str, roots: Iterable[str], *, since: float, skip: Iterable[str] = (), contract: str
) -> str | None:
    """The warning for an empty ``model_dir``, naming folders under ``roots`` with files newer than ``since``."""
    model = Path(model_dir)
    if model.is_dir() and any(p.is_file() for p in model.rglob("*")):
        return None
    skipped = [Path(s) for s in skip] + [model]
    written: Counter[str] = Counter()
    for root in roots:
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            if any(here == s or s in here.parents for s in skipped):
                dirs[:] = []
                continue
            for name in files:
                if name in _BOOKKEEPING or name.endswith(".log"):
                    continue
                try:
                    if (here / name).stat().st_mtime >= since:
                        written[str(here)] += 1
                except OSError:
                    continue
    return model_warning(model_dir, written, contract)


def model_warning(model_dir: str, written: Counter[str], contract: str) -> str:
    """The one-line warning: ``model_dir`` is empty; ``written`` counts files per folder found elsewhere."""
    kept = get_backend(contract).words.model_dir_words
    head = (
        f"the model dir {model_dir} is empty at the end of the run: "
        f"in the cloud only what is written to {kept} is the model"
    )
    if not written:
        return head + "; nothing new was written elsewhere either — save the model there"
    listed = ", ".join(f"{folder} ({n} file{'s' if n > 1 else ''})" for folder, n in written.most_common(3))
    more = f" and {len(written) - 3} more folders" if len(written) > 3 else ""
    return f"{head}; files were written to {listed}{more} instead — save the model to {kept}"
