"""Which log lines are a job's set-up (pip, launchers, TensorFlow's import-time log) rather than the user's code:
training starts at the first that is not (:mod:`cloudtrain.following.timeline`). Taken from real runs on each cloud."""

from __future__ import annotations

import re

CLOUDTRAIN_REPLICA = "cloudtrain"  # the replica name of a local run's own notices
LAUNCHER_PREFIX = "cloudtrain: "  # every line of cloudtrain's SageMaker launcher

#: pip's own lines (and the toolkit's): the start of a line, after any leading blanks.
_SETUP = re.compile(
    r"(Processing |Collecting |Requirement already satisfied|Downloading |Obtaining |Installing |"
    r"Successfully |Building |Created wheel|Stored in directory|Running setup\.py|Preparing metadata|"
    r"Getting requirements|Attempting uninstall|Found existing installation|Uninstalling |Looking in |"
    r"Using cached |DEPRECATION: |WARNING: Running pip|\[notice\]|Invoking script|Training Env|"
    r"Environment variables|SM_[A-Z0-9_]*=|PYTHONPATH=|"
    # TensorFlow's own start-up log while it is imported (absl's format, then TF's older one)
    r"[IWEF]\d{4} \d\d:\d\d:\d+\.\d+ +\d* *[\w.]+:\d+\] |"
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] (?:tensorflow|external|third_party)/|"
    r"WARNING: All log messages before absl::InitializeLog|To enable the following instructions:)"
)


def launches_user_code(message: str) -> bool:
    """cloudtrain's SageMaker launcher announcing ``python -m MODULE …``, which it then ``exec``s."""
    return message.startswith(LAUNCHER_PREFIX) and " -m " in message and " -m pip " not in message


def is_setup(replica: str, message: str) -> bool:
    """A line of the set-up before the user's code runs (blank and indented lines continue one)."""
    if replica == CLOUDTRAIN_REPLICA or message.startswith(LAUNCHER_PREFIX):
        return True
    if not message.strip() or message[0].isspace() or "sagemaker-training-toolkit" in message:
        return True
    return _SETUP.match(message) is not None
