"""Write the trained model where the platform's serving side looks for it.

Two artifacts, both loadable with no strategy and no trainer code:

- a TF SavedModel (``model.export``; signatures ``serve`` and
  ``serving_default``, float32 probabilities). Vertex's prebuilt TF serving
  containers want ``saved_model.pb`` directly in ``AIP_MODEL_DIR`` ("root"
  layout); SageMaker's TF Serving container wants ``model/<version>/``
  ("versioned" layout, version 1). Locally the root layout is used.
- ``model.keras`` beside it, for ``keras.saving.load_model`` (fine-tuning,
  notebooks).

``metrics.json`` (final metrics, throughput, wall time, the resolved plan) is
written next to them, and into ``SM_OUTPUT_DATA_DIR`` on SageMaker.

Multi-worker: only the chief writes here. The other workers still run the
export (it may involve collectives) into a local temporary directory that is
deleted at once.
"""

from __future__ import annotations

import inspect
import json
import os

from trainer import storage
from trainer.env import join

KERAS_FILE = "model.keras"
METRICS_FILE = "metrics.json"


def saved_model_dir(model_dir: str, layout: str) -> str:
    return join(model_dir, "1") if layout == "versioned" else model_dir


def _export_saved_model(model, path: str) -> None:
    kwargs = {}
    if "verbose" in inspect.signature(model.export).parameters:  # Keras >= 3.5; earlier ones print anyway
        kwargs["verbose"] = False
    model.export(path, **kwargs)


def export_model(model, model_dir: str, layout: str, *, is_chief: bool, rank: int) -> dict[str, str]:
    """Paths written, or {} on a non-chief worker."""
    if not is_chief:
        scratch = storage.local_tempdir(f"trainer-worker{rank}-export-")
        try:
            _export_saved_model(model, os.path.join(scratch, "saved_model"))
            model.save(os.path.join(scratch, KERAS_FILE))
        finally:
            storage.remove_local(scratch)
        return {}
    storage.makedirs(model_dir)
    sm_dir = saved_model_dir(model_dir, layout)
    _export_saved_model(model, sm_dir)
    # Keras writes .keras files through a local zip; copy it up for gs:// and s3://.
    scratch = storage.local_tempdir("trainer-export-")
    try:
        local = os.path.join(scratch, KERAS_FILE)
        model.save(local)
        keras_path = join(model_dir, KERAS_FILE)
        storage.upload(local, keras_path)
    finally:
        storage.remove_local(scratch)
    return {"saved_model": sm_dir, "keras": keras_path}


def write_metrics(metrics: dict, model_dir: str, output_dir: str | None) -> list[str]:
    text = json.dumps(metrics, indent=2, sort_keys=True, default=str) + "\n"
    written = []
    for directory in dict.fromkeys(d for d in (model_dir, output_dir) if d):
        storage.makedirs(directory)
        path = join(directory, METRICS_FILE)
        storage.write_text(path, text)
        written.append(path)
    return written
