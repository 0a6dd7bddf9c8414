"""tools/local_images.py dates a SageMaker image by its Dockerfile's commit, but never before its TensorFlow's first
final release: the 2.7 Dockerfile was committed for 2.7.0rc1, and ``tensorflow==2.7.*`` resolves as of a day
with no 2.7 release at all (no final 2.7 existed on 2021-10-24)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tools import local_images

DOCKERFILE = "ARG PYTHON_VERSION=3.8\nRUN pip install --no-cache-dir absl-py pandas==1.3.4\n"


def _clone_with(tmp_path: Path, version: str, day: str) -> Path:
    repo = tmp_path / "dlc"
    path = repo / "tensorflow" / "training" / "docker" / version / "py3" / "Dockerfile.cpu"
    path.parent.mkdir(parents=True)
    path.write_text(DOCKERFILE)
    when = f"{day}T12:00:00+00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True, env=env)
    subprocess.run([*git, "add", "."], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "dockerfile"], check=True, env=env)
    return repo


@pytest.mark.parametrize(
    ("committed", "first_release", "dated"),
    [
        ("2021-10-24", "2021-11-04", "2021-11-04"),  # 2.7's: written for the release candidate
        ("2023-08-24", "2022-11-18", "2023-08-24"),  # 2.11's: the image rebuilt after the release
    ],
)
def test_an_image_is_dated_by_its_dockerfile_but_never_before_its_tensorflows_first_release(
    tmp_path: Path, committed: str, first_release: str, dated: str
) -> None:
    dlc = _clone_with(tmp_path, "2.7", committed)
    table = local_images.sagemaker_images(dlc, ["2.7"], {"2.7": "2022-09-02"}, {"2.7": first_release})
    assert table["2.7"]["date"] == dated
    assert (table["2.7"]["python"], table["2.7"]["packages"]) == ("3.8", ["absl-py", "pandas==1.3.4"])
