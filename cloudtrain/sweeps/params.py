"""The config's ``sweep.params`` → typed parameters every engine understands, inferred as a user reads the YAML (``{min,
max}`` of floats or ints, ``values`` discrete or categorical; ``type:`` overrides). Each problem is a
:class:`SweepParamError` with its key's path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cloudtrain import environment_vars

Kind = Literal["double", "integer", "discrete", "categorical"]
#: Legacy ML Engine ``trainingInput.hyperparameters`` → ``sweep`` key names and values.
LEGACY_GOALS = {"MAXIMIZE": "maximize", "MINIMIZE": "minimize"}
LEGACY_ALGORITHMS = {"ALGORITHM_UNSPECIFIED": "bayesian", "GRID_SEARCH": "grid", "RANDOM_SEARCH": "random"}
LEGACY_SCALES = {
    "NONE": "linear",
    "UNIT_LINEAR_SCALE": "linear",
    "UNIT_LOG_SCALE": "log",
    "UNIT_REVERSE_LOG_SCALE": "reverse_log",
}
LEGACY_TYPES = {"DOUBLE": "double", "INTEGER": "integer", "DISCRETE": "discrete", "CATEGORICAL": "categorical"}
#: The metric tag ML Engine used when ``hyperparameterMetricTag`` was not given.
LEGACY_DEFAULT_METRIC = "training/hptuning/metric"


class SweepParamError(ValueError):
    def __init__(self, path: tuple[str, ...], message: str, hint: str | None = None):
        super().__init__(message)
        self.path, self.message, self.hint = path, message, hint


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    min: float | int | None = None
    max: float | int | None = None
    scale: str = "linear"  # linear | log | reverse_log
    values: tuple[Any, ...] = ()

    def bounds(self) -> tuple[float | int, float | int]:
        """``(min, max)`` of a double or integer range (:func:`resolve` sets both for those kinds)."""
        if self.min is None or self.max is None:
            raise ValueError(f"sweep parameter {self.name!r} is {self.kind}: it has no min and max")
        return self.min, self.max

    def grid_values(self) -> tuple[Any, ...]:
        """Every value a grid visits; a double range has none (it cannot be enumerated)."""
        if self.kind == "integer":
            low, high = self.bounds()
            return tuple(range(int(low), int(high) + 1))
        return self.values


def resolve(params: dict[str, Any], algorithm: str = "bayesian") -> list[Param]:
    """Validate and type every parameter (``params`` is the config's mapping of SweepParam models)."""
    if not params:
        raise SweepParamError(
            ("sweep", "params"),
            "a sweep needs at least one parameter",
            "e.g. params: {lr: {min: 0.0001, max: 0.1, scale: log}}",
        )
    out = [_one(name, p) for name, p in params.items()]
    if algorithm == "grid":
        for param in out:
            if param.kind == "double":
                raise SweepParamError(
                    ("sweep", "params", param.name),
                    "a grid cannot enumerate a continuous range",
                    "give values: [...] or an integer range, or use algorithm: random",
                )
    return out


def grid_size(params: list[Param]) -> int:
    size = 1
    for param in params:
        size *= len(param.grid_values())
    return size


def _one(name: str, p: Any) -> Param:
    path = ("sweep", "params", name)
    ranged = p.min is not None or p.max is not None
    if ranged and p.values is not None:
        raise SweepParamError(path, "give either {min, max} or values, not both")
    if not ranged and p.values is None:
        raise SweepParamError(path, "a parameter needs {min, max} or values", "e.g. {min: 0.001, max: 0.1}")
    kind = p.type or _infer(p)
    if kind in ("double", "integer"):
        if p.min is None or p.max is None:
            raise SweepParamError(path + (("max",) if p.max is None else ("min",)), f"a {kind} range needs min and max")
        if kind == "integer" and not all(isinstance(v, int) for v in (p.min, p.max)):
            raise SweepParamError(
                path,
                f"an integer range needs integer bounds, got {p.min!r}..{p.max!r}",
                "write type: double for a real-valued range",
            )
        if p.min >= p.max:
            raise SweepParamError(path + ("max",), f"max ({p.max}) must be greater than min ({p.min})")
        if p.scale == "log" and p.min <= 0:
            raise SweepParamError(
                path + ("min",),
                f"a log scale needs min > 0, got {p.min}",
                "use scale: linear, or a positive min such as 1e-5",
            )
        if p.scale == "reverse_log" and not (0 <= p.min and p.max < 1):
            raise SweepParamError(path, "a reverse_log scale needs 0 <= min < max < 1", "use scale: log or linear")
        lo, hi = (float(p.min), float(p.max)) if kind == "double" else (p.min, p.max)
        return Param(name, kind, lo, hi, p.scale)
    if p.values is None or not p.values:
        raise SweepParamError(path + ("values",), f"a {kind} parameter needs a non-empty list of values")
    if p.scale != "linear":
        raise SweepParamError(path + ("scale",), "scale applies to {min, max} ranges only", "remove scale")
    if len(set(map(repr, p.values))) != len(p.values):
        raise SweepParamError(path + ("values",), "values repeat", "list each value once")
    if kind == "discrete":
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p.values):
            raise SweepParamError(path + ("values",), "discrete values must be numbers", "use type: categorical")
        return Param(name, kind, values=tuple(sorted(p.values)))
    return Param(name, "categorical", values=tuple(_text(v) for v in p.values))


def _infer(p: Any) -> Kind:
    if p.values is not None:
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p.values)
        return "discrete" if numbers and p.values else "categorical"
    return "integer" if all(isinstance(v, int) for v in (p.min, p.max)) else "double"


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def format_value(value: Any) -> str:
    """How a trial's value is written on the command line (``--lr=0.001``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return _text(value)


#: The environment variable that tells a trial's code which metric the sweep optimises.
METRIC_ENV = environment_vars.SWEEP_METRIC


def metric_regex(metric: str) -> str:
    """SageMaker's MetricDefinitions regex for the ``{"event": "metric", …}`` line (trainer/metrics.py)."""
    import re

    return '"name": "' + re.escape(metric).replace('"', '\\"') + '", "value": ([-+0-9.eE]+)'
