"""Every default that changes what runs is named where it applies (issue #28, item 6)."""

from __future__ import annotations

import json

from cloudtrain.cli import main
from tests.conftest import VERTEX_BASE


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_json_names_the_defaults_that_apply(project, capsys):
    code, out, err = run(capsys, "validate", str(project()), "-o", "json")
    assert code == 0, err
    result = json.loads(out)
    assert (result["max_runtime"], result["tensorflow"], result["defaults"]) == (
        86400,
        "2.17",
        ["max_runtime", "image.tensorflow"],
    )
    code, out, err = run(
        capsys, "validate", str(project(VERTEX_BASE + "max_runtime: 2h\nimage: {tensorflow: '2.16'}\n")), "-o", "json"
    )
    assert code == 0, err
    assert json.loads(out)["defaults"] == []


def test_the_dry_run_says_the_24_hour_runtime_and_the_image_are_defaults(project, capsys):
    code, out, err = run(capsys, "submit", str(project()), "--dry-run")
    assert code == 0, err
    text = out + err
    assert "if it runs until max_runtime (24 h, the default)" in text
    assert "tf-gpu.2-17.py310:latest (TensorFlow 2.17, the newest image: the default)" in text
    code, out, err = run(capsys, "submit", str(project(VERTEX_BASE + "max_runtime: 2h\n")), "--dry-run")
    assert code == 0, err
    assert "if it runs until max_runtime (2 h)\n" in out + err


def test_a_local_run_names_its_default_runtime(project, capsys):
    code, out, err = run(capsys, "submit", str(project()), "--dry-run", "--local")
    assert code == 0, err
    assert "max runtime: 24 h (default)" in out + err
