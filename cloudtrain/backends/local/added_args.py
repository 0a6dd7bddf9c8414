"""One line for a script that exits 2 because its argparse refuses an argument cloudtrain added.

A script written for Vertex AI (which passes a script only its args) and run under SageMaker's contract,
or with ``model_dir: true``, gets ``--model_dir`` as the SageMaker estimator adds it; a strict
``parse_args()`` then stops with ``error: unrecognized arguments: --model_dir …``. The line names the
setting that removes it.
"""

from __future__ import annotations

import re

#: argparse's own words (``ArgumentParser.parse_args``), exit status 2
_UNRECOGNIZED = re.compile(r"error: unrecognized arguments: (.*)")
ARGPARSE_EXIT = 2
TAIL_CHARS = 4_000


def added_args_hint(log_text: str, exit_code: int | None, *, passed_model_dir: bool) -> str | None:
    """The hint when the replica's argparse refused ``--model_dir`` that cloudtrain passed, else None."""
    if exit_code != ARGPARSE_EXIT or not passed_model_dir:
        return None
    found = _UNRECOGNIZED.findall(log_text[-TAIL_CHARS:])
    if not found or not any(a == "--model_dir" or a.startswith("--model_dir=") for a in found[-1].split()):
        return None
    return (
        "the script's argparse does not take --model_dir, which cloudtrain passed as SageMaker's estimator "
        "does: set model_dir: false in the config (or read it: parser.add_argument('--model_dir'))"
    )
