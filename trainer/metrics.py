"""Report a sweep's metric the way each platform reads it. No TensorFlow here.

One call, :func:`report_metric`, does all of it, and a user's own package can copy it:

* prints the event line ``{"event": "metric", "name": …, "value": …, "step": …}`` — the line
  SageMaker's tuning job reads with the regex cloudtrain puts in ``MetricDefinitions``,
  and the line a local sweep reads;
* on Vertex AI (a tuning trial: ``CLOUD_ML_TRIAL_ID`` set, or ``CLOUD_ML_HP_METRIC_FILE``
  pointing elsewhere) reports it through ``cloudml-hypertune``, which writes where the
  Vertex tuning service reads.

cloudtrain tells a trial which metric the sweep optimises in ``CLOUDTRAIN_SWEEP_METRIC``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from trainer import events

METRIC_ENV = "CLOUDTRAIN_SWEEP_METRIC"  # cloudtrain.sweeps.params.METRIC_ENV
_hypertune = None


def sweep_metric(environ: Mapping[str, str] = os.environ) -> str | None:
    return environ.get(METRIC_ENV) or None


def report_metric(name: str, value: float, step: int, environ: Mapping[str, str] = os.environ) -> None:
    events.emit("metric", name=name, value=value, step=step)
    if not (environ.get("CLOUD_ML_TRIAL_ID") or environ.get("CLOUD_ML_HP_METRIC_FILE")):
        return  # not a Vertex trial: the event line is what SageMaker and local sweeps read
    try:
        import hypertune
    except ImportError:
        print(
            "WARNING: cloudml-hypertune is not installed; Vertex AI cannot read this trial's metric "
            "(add cloudml-hypertune to the package's requirements)",
            file=sys.stderr,
            flush=True,
        )
        return
    global _hypertune
    if _hypertune is None:  # one per process: a new one starts its file afresh
        _hypertune = hypertune.HyperTune()
    _hypertune.report_hyperparameter_tuning_metric(hyperparameter_metric_tag=name, metric_value=value, global_step=step)


def report_epoch(fields: Mapping[str, float | None], epoch: int, environ: Mapping[str, str] = os.environ) -> None:
    """After an epoch: report the sweep's metric if this run is a trial and the epoch has it."""
    name = sweep_metric(environ)
    if name is None:
        return
    value = fields.get(name)
    if value is None:
        known = ", ".join(k for k, v in fields.items() if isinstance(v, (int, float)))
        print(
            f"WARNING: the sweep's metric {name!r} is not one this trainer reports ({known})",
            file=sys.stderr,
            flush=True,
        )
        return
    report_metric(name, float(value), epoch, environ)
