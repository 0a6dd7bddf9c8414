"""What a config asks of a backend that cannot do it: the neutral check asks the backend's
``capabilities`` and prints the backend's own reason, word for word, naming the file and the key
(cloudtrain/backend_rules/capabilities.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cloudtrain.backend_rules import Capabilities, Capability, Refusal
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from tests.conftest import SAGEMAKER_BASE, VERTEX_BASE

SCRIPT = Path(__file__).resolve().parents[1] / "packages" / "sm_script"


def _line(path: Path) -> str:
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    errors = getattr(refused.value, "errors", None) or [refused.value]
    assert len(errors) == 1, [str(e) for e in errors]
    return str(errors[0])


@pytest.mark.parametrize(
    ("base", "extra", "expected"),
    [
        (
            SAGEMAKER_BASE,
            "flex_start: {enabled: true}\n",
            "job.yaml:11: flex_start.enabled: flex_start (Dynamic Workload Scheduler) is a Vertex AI strategy; "
            "SageMaker training jobs have none — remove flex_start, or use spot with spot.max_wait",
        ),
        (
            VERTEX_BASE,
            "spot: {enabled: true, max_wait: 7200}\n",
            "job.yaml:13: spot.max_wait: max_wait applies to SageMaker only — remove spot.max_wait",
        ),
        (
            VERTEX_BASE.replace("backend: vertex", "backend: local"),
            "container: {image_uri: us-docker.pkg.dev/p/r/trainer:1}\n",
            "job.yaml:10: container: --local runs a Python package on this machine; it does not start containers "
            "(us-docker.pkg.dev/p/r/trainer:1) — run the package (package.path, package.module) instead of "
            "container, or run the image with docker yourself",
        ),
    ],
)
def test_each_backend_refuses_in_its_own_words(project, base: str, extra: str, expected: str) -> None:
    text = base + extra
    if "container:" in extra:
        text = text.replace("package:\n  path: trainer\n  module: trainer.task\n", "")
    line = _line(project(text))
    assert line[line.index("job.yaml:") :] == expected, line


def test_a_script_job_with_args_on_sagemaker_is_told_to_move_them(tmp_path: Path) -> None:
    shutil.copytree(SCRIPT, tmp_path / "sm_script")
    path = tmp_path / "job.yaml"
    path.write_text(
        SAGEMAKER_BASE.replace("  path: trainer\n  module: trainer.task\n", "  path: sm_script\n  script: mnist-2.py\n")
        + "args: [--epochs, '2']\n"
    )
    assert _line(path).split("/")[-1] == (
        "job.yaml:11: args: SageMaker passes a script only its hyperparameters (as --name value) — "
        "move each argument to hyperparameters: {name: value}"
    )


def test_a_reason_is_the_backends_own_else_the_default_and_never_for_what_it_has() -> None:
    own = Refusal("{title} queues on a {image} board", "use {title}'s board")
    can = Capabilities.of({Capability.TPUS}, FLEX_START=own)
    assert Capability.TPUS in can and Capability.FLEX_START not in can and Capability.BILLED not in can
    assert can.refusal(Capability.FLEX_START).format(title="Acme", image="x") == (
        "Acme queues on a x board",
        "use Acme's board",
    )
    assert can.refusal(Capability.SPOT_MAX_WAIT).format(title="Acme") == (
        "Acme takes no spot.max_wait",
        "remove spot.max_wait",
    )
    with pytest.raises(ValueError, match="TPUS"):
        Capabilities.of({Capability.TPUS}, TPUS=own)
