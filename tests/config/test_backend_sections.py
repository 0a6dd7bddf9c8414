"""A backend's own ``<name>:`` keys come from its register line, not from an edit of the schema.

tests/conftest.py registers the example backend with ``section=`` after the schema was imported: its
name and keys are read by :func:`~cloudtrain.config.load.load_config` and the CLI (the config class of
the backends registered now, :func:`~cloudtrain.config.schema.registered_config`), and the config that
the generated reference sees stays cloudtrain's own (``local:`` and ``slurm:`` the sections there).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from cloudtrain.backend_rules import sections
from cloudtrain.backends import get_backend
from cloudtrain.backends.base import Hardware
from cloudtrain.cli import main
from cloudtrain.config import records
from cloudtrain.config.load import load_config
from cloudtrain.config.schema import JobConfig, config_with_sections
from cloudtrain.errors import ConfigError, ExitCode, UsageError
from cloudtrain.spec import build_spec
from tests.backends.example.section import Section
from tests.conftest import VERTEX_BASE

DOCUMENT = {"name": "demo", "backend": "vertex", "region": "us-central1", "machine": {"type": "n1-standard-4"}}

#: A job on the example backend (tests/backends/example/): its own machines, its own image, its queue.
EXAMPLE = """\
name: demo
backend: example
region: ex-1
machine: {type: ex-gpu}
image: {uri: registry.example/train:1}
package: {path: trainer, module: trainer.task}
example:
  queue: fast
output_dir: /example/runs/demo
"""


def test_an_example_only_key_validates_through_its_register_line():
    config = records.validate(config_with_sections(["example"]), {**DOCUMENT, "example": {"queue": "fast"}})
    assert getattr(config, "example") == Section(queue="fast")  # noqa: B009 - the checker does not know the key
    assert getattr(records.validate(config_with_sections(["example"]), DOCUMENT), "example") is None  # noqa: B009


def test_an_unknown_key_in_the_example_section_is_refused():
    with pytest.raises(records.Invalid) as info:
        records.validate(config_with_sections(["example"]), {**DOCUMENT, "example": {"queue": "fast", "colour": "red"}})
    assert [(e["type"], e["loc"]) for e in info.value.errors] == [("extra_forbidden", ("example", "colour"))]


def test_the_users_config_has_the_sections_registered_before_it_was_imported():
    built_in = [name for name in sections() if name != "example"]  # the registry's, example registered since
    assert list(JobConfig.model_fields)[-len(built_in) :] == built_in and {"local", "slurm"} <= set(built_in)
    with pytest.raises(records.Invalid) as info:
        records.validate(JobConfig, {**DOCUMENT, "example": {"queue": "fast"}})
    assert [(e["type"], e["loc"]) for e in info.value.errors] == [("extra_forbidden", ("example",))]


def test_the_schema_reads_the_slurm_section_without_importing_the_backend():
    code = (
        "import sys, cloudtrain.config.schema\n"
        + "print(sorted(m for m in sys.modules if m.startswith('cloudtrain.backends.')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "'cloudtrain.backends.slurm.section'" in loaded and "cloudtrain.backends.slurm.backend" not in loaded
    assert "'cloudtrain.backends.local.section'" in loaded and "cloudtrain.backends.local.backend" not in loaded


def test_a_backend_registered_since_loads_with_its_section_into_the_spec(project):
    loaded = load_config(project(EXAMPLE))
    assert (loaded.config.backend, loaded.config.section("example")) == ("example", Section(queue="fast"))
    spec = build_spec(loaded)
    assert (spec.machine.type, spec.machine.accelerator_count) == ("ex-gpu", 1)
    assert getattr(spec.backend_settings, "section") == Section(queue="fast")  # noqa: B009 - the example's record
    without = load_config(project(EXAMPLE.replace("example:\n  queue: fast\n", ""), name="bare.yaml"))
    assert without.config.section("example") is None


def test_the_cli_submits_a_backend_registered_since_with_its_section(project, capsys):
    assert main(["submit", str(project(EXAMPLE)), "--dry-run", "-o", "json"]) == ExitCode.OK
    plan = json.loads(capsys.readouterr().out)
    assert plan["request"]["queue"] == "fast"


@pytest.mark.parametrize("uri", ["registry.example/train:1", "ghcr.io/lab/tf:2.16-gpu"])
def test_a_dry_run_on_a_backend_with_no_registry_of_its_own_prints_the_config_s_image(project, capsys, uri):
    """The image row is the config's URI: no image registry says nothing of whether an image runs."""
    assert main(["submit", str(project(EXAMPLE.replace("registry.example/train:1", uri))), "--dry-run"]) == 0
    image_row = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("image")]
    assert len(image_row) == 1 and image_row[0].split(None, 1)[1].startswith(uri), image_row
    assert "TensorFlow None" not in image_row[0]


def test_a_typo_in_the_section_of_a_backend_registered_since_is_refused(project, capsys):
    config = project(EXAMPLE.replace("  queue: fast", "  queu: fast"))
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert (info.value.field, info.value.line) == ("example.queu", 8)
    assert "did you mean 'queue'?" in str(info.value)
    assert main(["validate", str(config)]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "example.queu" in err and "did you mean 'queue'?" in err


def test_the_local_section_has_its_defaults_where_the_file_has_none(project):
    assert load_config(project()).config.section("local").python is None
    with_python = project(VERTEX_BASE + 'local:\n  python: "3.10"\n', name="local.yaml")
    assert load_config(with_python).config.section("local").python == "3.10"


def test_a_backend_whose_machines_are_in_no_catalog_checks_the_type_against_its_own(project):
    with pytest.raises(ConfigError) as info:
        load_config(project(EXAMPLE.replace("type: ex-gpu", "type: ex-huge")))
    assert (info.value.field, info.value.line) == ("machine.type", 4)
    assert "no Example machine 'ex-huge'" in str(info.value) and "use ex-small, ex-gpu" in str(info.value)
    example = get_backend("example")
    small = example.resolve_machine(load_config(project(EXAMPLE.replace("ex-gpu", "ex-small"))).config)
    assert (small.cloud, small.machine_type, small.vcpus, small.memory_gb) == ("example", "ex-small", 4, 16.0)
    assert (small.accelerator, small.accelerator_count) == (None, 0)
    gpu = example.resolve_machine(load_config(project(EXAMPLE)).config)
    assert (gpu.vcpus, gpu.memory_gb, gpu.accelerator, gpu.accelerator_count) == (8, 32.0, "T4", 1)
    assert (gpu.price_per_hour, gpu.price_region, gpu.price_date, gpu.gpu) == (None, "", "", None)  # in no price list
    assert build_spec(load_config(project(EXAMPLE))).machine.accelerator_count == 1


def test_a_backend_with_no_staging_bucket_asks_for_an_output_dir(project):
    loaded = load_config(project(EXAMPLE.replace("output_dir: /example/runs/demo\n", "")))
    with pytest.raises(UsageError) as info:
        build_spec(loaded)
    assert "job demo: no folder for its outputs" in str(info.value)
    assert info.value.hint == "set output_dir: (or staging_bucket:)"
    bucket = build_spec(
        load_config(project(EXAMPLE.replace("output_dir: /example/runs/demo", "staging_bucket: file:///ex/")))
    )
    assert bucket.output_dir == f"file:///ex/cloudtrain/outputs/{bucket.job_name}"


def test_a_backend_whose_machines_are_in_no_catalog_describes_them_and_finds_the_nearest():
    example, vertex = get_backend("example"), get_backend("vertex")
    assert example.describe({"type": "ex-small"}) == Hardware(None, 0, 4, 16.0)
    assert example.describe({"type": "n1-standard-4"}) is None
    t4 = vertex.describe({"type": "n1-standard-8", "accelerator": "NVIDIA_TESLA_T4", "accelerator_count": 1})
    assert t4 is not None and example.nearest(t4) == [{"type": "ex-gpu"}]
    assert example.nearest(Hardware(None, 0, 6, 24.0)) == [{"type": "ex-small"}]

    class ThreeSizes(type(example)):  # type: ignore[misc]
        facts = replace(
            example.facts,
            machines={m: Hardware(None, 0, v, 4.0 * v) for m, v in (("s", 2), ("m", 8), ("l", 32))}
            | {"g": Hardware("T4", 1, 8, 32.0)},
        )

    assert ThreeSizes().nearest(Hardware(None, 0, 6, 24.0)) == [{"type": "m"}, {"type": "s"}, {"type": "l"}]
    assert ThreeSizes().nearest(Hardware(None, 0, 30, 120.0)) == [{"type": "l"}, {"type": "m"}, {"type": "s"}]
