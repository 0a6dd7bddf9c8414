"""The names the SageMaker TensorFlow training images' entry leaves out of a script's environment.

That entry (``sagemaker-tensorflow-training`` 20.5.0, ``sagemaker-training`` <= 4.8.3) starts the script through
dash, which passes on only shell-identifier names: ``SM_HP_LEARNING-RATE`` never reaches a script, though ``SM_HPS``
and ``--learning-rate`` carry the value. The local SageMaker contract leaves the same names out; submit warns."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cloudtrain.spec import JobSpec

_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_]")


def shell_drops(name: str) -> bool:
    """Whether the images' ``/bin/sh`` leaves variable ``name`` out of the script's environment."""
    return _SHELL_NAME.fullmatch(name) is None


def dropped_hyperparameters(spec: JobSpec) -> list[str]:
    """The hyperparameters whose ``SM_HP_<NAME>`` a script under the SageMaker contract never sees."""
    if spec.cloud != "sagemaker" or spec.container:
        return []
    return [key for key in spec.hyperparameters if shell_drops(f"SM_HP_{key.upper()}")]


def hyperparameter_warnings(spec: JobSpec) -> list[str]:
    """One line per such hyperparameter, naming it and the fix."""
    lines = []
    for key in dropped_hyperparameters(spec):
        chars = " or ".join(repr(c) for c in dict.fromkeys(_NOT_IN_NAME.findall(key)))
        lines.append(
            f"hyperparameters: {key!r}: SageMaker's TensorFlow containers drop SM_HP_{key.upper()} (their "
            f"/bin/sh passes no variable whose name has {chars}); rename it {_NOT_IN_NAME.sub('_', key)!r}, "
            f"or read SM_HPS or the --{key} argument"
        )
    return lines
