"""A local replica's line → its severity, read from the line itself.

From the shapes loggers write: absl / glog, TensorFlow's C++ log, Python's logging, tracebacks and ``SomeError:``
lines. TensorFlow's start-up notes on a machine without what it looks for (no CUDA, CPU instruction notes) are
DEBUG: the CLI shows them only with ``--debug``; the log file keeps every line."""

from __future__ import annotations

import re

_ABSL = re.compile(r"^(?P<level>[IWEF])\d{4} \d\d:\d\d:\d\d[.\d]*\s+\d+ \S+:\d+\]")
_TF_CPP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: (?P<level>[IWEF]) \S+:\d+\]")
_PY_LOGGING = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)[: ]")
_PY_ERROR = re.compile(r"^(Traceback \(most recent call last\):|[A-Za-z_][\w.]*(Error|Exception|Interrupt): )")
_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}

#: TensorFlow's start-up noise: facts about this machine, not about the job.
_NOISE = re.compile(
    "|".join(
        [
            r"All log messages before absl::InitializeLog\(\) is called are written to STDERR",
            r"Could not find cuda drivers on your machine",
            r"failed call to cuInit",
            r"Cannot dlopen some GPU libraries",
            r"This TensorFlow binary is optimized to use available CPU instructions",
            r"^To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags",
            r"oneDNN custom operations are on",
            r"TF-TRT Warning: Could not find TensorRT",
            r"Unable to register cu(DNN|FFT|BLAS) factory",
            r"computation placer already registered",
            r"Skipping registering GPU devices",
            r"successful NUMA node read from SysFS",
        ]
    )
)


def severity_of(text: str) -> str:
    """DEBUG for known start-up noise; else the level the line's logger wrote; else INFO."""
    if _NOISE.search(text):
        return "DEBUG"
    match = _ABSL.match(text) or _TF_CPP.match(text)
    if match:
        return _LEVELS[match["level"]]
    match = _PY_LOGGING.match(text)
    if match:
        return match["level"]
    if _PY_ERROR.match(text):
        return "ERROR"
    return "INFO"
