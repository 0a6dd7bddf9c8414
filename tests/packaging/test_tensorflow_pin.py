"""A package requirement that pins another TensorFlow than the image's: one warning naming both versions, and
the summary's image line says which TensorFlow really runs (pip installs the pin over the image's)."""

from __future__ import annotations

import pytest

from cloudtrain.cli import main
from cloudtrain.packaging.metadata import replaced_tensorflow

CONFIG = """\
name: pinned
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-4}
package: {path: trainer, module: trainer.task}
image: {tensorflow: "2.15"}
"""


@pytest.mark.parametrize(
    ("requirements", "image", "expected"),
    [
        (["tensorflow==2.12.1"], "2.11", ("tensorflow==2.12.1", "2.12.1")),
        (["numpy<2", "tensorflow-cpu===2.16.*"], "2.15", ("tensorflow-cpu===2.16.*", "2.16")),
        (["tensorflow==2.11.0"], "2.11", None),  # the image's own release: nothing replaced
        (["tensorflow>=2.5"], "2.11", None),  # a range the image's TensorFlow meets: pip keeps it
        (["tensorflow-datasets==4.9.2"], "2.11", None),  # another distribution
        (["tensorflow==2.12.1"], None, None),  # an explicit image: its TensorFlow is not known here
    ],
)
def test_which_pins_replace_the_images_tensorflow(requirements, image, expected):
    assert replaced_tensorflow(requirements, image) == expected


def test_the_dry_run_warns_once_and_its_image_line_says_what_runs(tmp_path, monkeypatch, capsys):
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "__init__.py").write_text("")
    (tmp_path / "trainer" / "task.py").write_text("print('hi')\n")
    (tmp_path / "trainer" / "requirements.txt").write_text("tensorflow==2.16.2\n")
    (tmp_path / "job.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    assert main(["submit", "job.yaml", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    warnings = [line for line in err.splitlines() if "replaces the image's TensorFlow" in line]
    assert warnings == [
        "warning: package requirement tensorflow==2.16.2 replaces the image's TensorFlow 2.15: TensorFlow 2.16.2 "
        'runs (pip installs it over the image\'s) — remove the pin, or set image.tensorflow: "2.16"'
    ]
    image = next(line for line in out.splitlines() if line.startswith("image:"))
    assert image.endswith("; TensorFlow 2.16.2 runs (tensorflow==2.16.2 in the package)")
    (tmp_path / "trainer" / "requirements.txt").write_text("tensorflow==2.15.1\n")
    assert main(["submit", "job.yaml", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "replaces the image's" not in err and "runs (" not in out
