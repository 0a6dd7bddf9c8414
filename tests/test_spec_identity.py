"""Every submit gets its own job name, even in the same second; a given suffix keeps tests deterministic."""

from __future__ import annotations

import datetime as dt
import re

from cloudtrain.config.load import load_config
from cloudtrain.spec import SUFFIX_LENGTH, build_spec

NOW = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def test_same_second_specs_get_different_names_and_output_folders(project):
    loaded = load_config(project())
    specs = [build_spec(loaded, now=NOW) for _ in range(50)]
    assert len({s.job_name for s in specs}) == 50
    assert len({s.output_dir for s in specs}) == 50
    for spec in specs:
        assert re.fullmatch(rf"demo-20250102-030405-[a-z0-9]{{{SUFFIX_LENGTH}}}", spec.job_name)
        assert spec.output_dir == f"gs://my-bucket/cloudtrain/outputs/{spec.job_name}"


def test_the_longest_name_fits_sagemaker(project):
    """40 characters of config name + time + suffix = 63, SageMaker's limit (and its pattern)."""
    from tests.conftest import VERTEX_BASE

    loaded = load_config(project(VERTEX_BASE.replace("name: demo", "name: " + "a" * 40)))
    name = build_spec(loaded, now=NOW).job_name
    assert len(name) == 63 and re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", name)


def test_a_given_suffix_is_used(project):
    assert build_spec(load_config(project()), now=NOW, suffix="abc123").job_name == "demo-20250102-030405-abc123"
