"""A backend's own ``<name>:`` keys come from its register line, not from an edit of the schema.

tests/conftest.py registers the example backend with ``section=`` after the schema was imported: its
keys are read by :func:`~cloudtrain.config.schema.config_with_sections`, and the config that users and
the generated reference see stays cloudtrain's own (``slurm:`` the one section there).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from cloudtrain.config import twin
from cloudtrain.config.schema import JobConfig, config_with_sections
from tests.backends.example.section import Section

DOCUMENT = {"name": "demo", "backend": "vertex", "region": "us-central1", "machine": {"type": "n1-standard-4"}}


def test_an_example_only_key_validates_through_its_register_line():
    config = twin.validate(config_with_sections(["example"]), {**DOCUMENT, "example": {"queue": "fast"}})
    assert getattr(config, "example") == Section(queue="fast")  # noqa: B009 - the checker does not know the key
    assert getattr(twin.validate(config_with_sections(["example"]), DOCUMENT), "example") is None  # noqa: B009


def test_an_unknown_key_in_the_example_section_is_refused():
    with pytest.raises(twin.Invalid) as info:
        twin.validate(config_with_sections(["example"]), {**DOCUMENT, "example": {"queue": "fast", "colour": "red"}})
    assert [(e["type"], e["loc"]) for e in info.value.errors] == [("extra_forbidden", ("example", "colour"))]


def test_the_users_config_has_the_sections_registered_before_it_was_imported():
    assert list(JobConfig.model_fields)[-2:] == ["local", "slurm"]
    with pytest.raises(twin.Invalid) as info:
        twin.validate(JobConfig, {**DOCUMENT, "example": {"queue": "fast"}})
    assert [(e["type"], e["loc"]) for e in info.value.errors] == [("extra_forbidden", ("example",))]


def test_the_schema_reads_the_slurm_section_without_importing_the_backend():
    code = (
        "import sys, cloudtrain.config; print(sorted(m for m in sys.modules if m.startswith('cloudtrain.backends.')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "'cloudtrain.backends.slurm.section'" in loaded and "cloudtrain.backends.slurm.backend" not in loaded
