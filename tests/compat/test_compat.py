"""The compat check's Vertex default row in CI: the trainer's sdist alone, in a fresh environment
of Vertex's newest image (Python 3.10 + TF 2.17), trains 2 epochs, exports, and the export reloads.
The other rows (TF 2.16; SageMaker's newest on Python 3.12; 2 workers) run with ``python -m bench.compat``."""

from __future__ import annotations

import pytest

from bench import compat

pytestmark = [pytest.mark.slow, pytest.mark.tf]


def test_the_trainer_on_the_vertex_default_image(tf_cache, tmp_path):
    [row] = [r for r in compat.rows() if r.name == "vertex-default"]
    result = compat.run_row(row, cache=tf_cache, work=tmp_path)
    if result.status == "skipped":
        pytest.skip(result.detail)
    assert result.status == "ok", result.detail + "\n" + (tmp_path / "submit.log").read_text()[-3000:]
    n = result.numbers
    assert n["python"].startswith(row.python + ".") and n["tensorflow"].startswith(row.tensorflow + ".")
    assert n["epochs"] == 2 and n["agree"] == 1.0 and n["val_accuracy"] > 0.5


def test_rows_cover_the_clouds_real_pairs():
    names = {(r.python, r.tensorflow, r.replicas) for r in compat.rows()}
    assert {("3.10", "2.16", 1), ("3.10", "2.17", 1), ("3.12", "2.21", 1), ("3.10", "2.17", 2)} <= names
