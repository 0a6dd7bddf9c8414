"""The config loader: valid files load; every kind of bad input gives one actionable line."""

from __future__ import annotations

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from tests.conftest import VERTEX_BASE


def error_of(path, *overrides, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides, **kwargs)
    return info.value


def test_valid_config_loads(project):
    loaded = load_config(project())
    cfg = loaded.config
    assert (cfg.backend, cfg.region, cfg.machine.accelerator_count, cfg.replica_count) == (
        "vertex",
        "us-central1",
        4,
        1,
    )
    assert cfg.max_runtime == 86400


def test_missing_file_names_the_file(tmp_path):
    error = error_of(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(error) and "not found" in str(error)


def test_yaml_syntax_error_names_the_line(project):
    error = error_of(project(VERTEX_BASE + "labels: {a: b\n"))
    assert error.line is not None and error.line >= 14
    assert "YAML syntax error" in str(error)


def test_wrong_type_names_field_and_line(project):
    error = error_of(project(VERTEX_BASE + "replica_count: two\n"))
    assert error.field == "replica_count" and error.line == 13
    assert "'two'" in str(error)


@pytest.mark.parametrize(
    ("extra", "field", "suggestion"),
    [("machin_type: x\n", "machin_type", None), ("replica_cont: 2\n", "replica_cont", "replica_count")],
)
def test_unknown_key_suggests(project, extra, field, suggestion):
    error = error_of(project(VERTEX_BASE + extra))
    assert error.field == field and error.line == 13
    if suggestion:
        assert f"did you mean {suggestion!r}" in str(error)


def test_unknown_nested_key_suggests(project):
    text = VERTEX_BASE.replace("  accelerator_count: 4", "  accelerator_cout: 4")
    error = error_of(project(text))
    assert error.field == "machine.accelerator_cout" and error.line == 9
    assert "did you mean 'accelerator_count'" in str(error)


def test_yaml11_boolean_word_is_refused_for_booleans(project):
    error = error_of(project(VERTEX_BASE + "spot:\n  enabled: off\n"))
    assert error.field == "spot.enabled" and error.line == 14
    assert "write true or false" in str(error)


def test_yaml11_boolean_word_stays_text_elsewhere(project):
    cfg = load_config(project(VERTEX_BASE + "env:\n  DEBUG: off\n  COUNTRY: no\n")).config
    assert cfg.env == {"DEBUG": "off", "COUNTRY": "no"}


def test_exponent_float_and_octal_looking_numbers(project):
    cfg = load_config(project(VERTEX_BASE + "hyperparameters:\n  lr: 1e-3\n  seed: 010\n")).config
    assert cfg.hyperparameters == {"lr": 0.001, "seed": 10}


def test_unquoted_version_number_is_refused(project):
    error = error_of(project(VERTEX_BASE + "image:\n  tensorflow: 2.10\n"))
    # the suggestion is what was typed, quoted: "2.10", not the number YAML made of it
    assert error.field == "image.tensorflow" and 'tensorflow: "2.10"' in str(error) and '"2.1"' not in str(error)


def test_a_value_of_none_of_the_allowed_types_lists_them(project):
    error = error_of(project(VERTEX_BASE + "hyperparameters:\n  lr: [0.1, 0.01]\n"))  # a list, where one value goes
    assert error.field == "hyperparameters.lr" and error.line == 14
    assert "input should be a valid boolean, integer, number or string" in str(error)


def test_a_message_that_starts_with_yaml_keeps_its_capitals(project):
    error = error_of(project(VERTEX_BASE + "local:\n  python: 3.1\n"))
    assert 'YAML read this version as the number 3.1; quote it, e.g. "3.1"' in str(error)


@pytest.mark.parametrize("value", ["2.17", "'2.17'", '"2.17"'])
def test_set_takes_a_version_as_typed(project, value):
    loaded = load_config(project(), [f"image.tensorflow={value}"])
    assert loaded.config.image.tensorflow == "2.17"


def test_keys_from_habit_get_the_key_cloudtrain_has(project):
    no_machine = VERTEX_BASE.split("machine:")[0] + "package:" + VERTEX_BASE.split("package:")[1]
    error = error_of(project(no_machine + "machine_type: n1-standard-8\n"))
    assert error.field == "machine_type" and "did you mean machine.type?" in str(error)  # not "machine is missing"
    error = error_of(project(VERTEX_BASE + "tensorflow: '2.17'\n"))
    assert error.field == "tensorflow" and "did you mean image.tensorflow?" in str(error)


def test_machine_machine_type_means_machine_type(project):
    error = error_of(project(VERTEX_BASE.replace("  type: n1-standard-16", "  machine_type: n1-standard-16")))
    assert error.field == "machine.machine_type" and "did you mean machine.type?" in str(error)


def test_args_as_one_string_gets_the_list_form(project):
    error = error_of(project(VERTEX_BASE + "args: --epochs 3 --batch-size 64\n"))
    assert error.field == "args" and 'args: ["--epochs", "3", "--batch-size", "64"]' in str(error)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ("replica_count: 0\n", "replica_count"),
        ("replica_count: -2\n", "replica_count"),
        ("max_runtime: 0\n", "max_runtime"),
    ],
)
def test_zero_and_negative_counts(project, extra, field):
    error = error_of(project(VERTEX_BASE + extra))
    assert error.field == field and "greater than" in str(error)


def test_negative_accelerator_count(project):
    error = error_of(project(VERTEX_BASE.replace("accelerator_count: 4", "accelerator_count: -1")))
    assert error.field == "machine.accelerator_count" and error.line == 9


def test_bad_duration(project):
    error = error_of(project(VERTEX_BASE + "max_runtime: soon\n"))
    assert error.field == "max_runtime" and "90s, 30m, 24h" in str(error)


def test_unknown_region_suggests_nearest(project):
    error = error_of(project(VERTEX_BASE.replace("us-central1", "us-centrl1")))
    assert error.field == "region" and error.line == 3 and "us-central1" in str(error)


def test_impossible_machine_combination_names_alternatives(project):
    error = error_of(project(VERTEX_BASE.replace("n1-standard-16", "n1-standard-2").replace("count: 4", "count: 8")))
    assert error.field is not None and error.field.startswith("machine.") and "nearest valid" in str(error)


def test_accelerator_not_offered_on_machine(project):
    error = error_of(project(VERTEX_BASE.replace("NVIDIA_TESLA_T4", "NVIDIA_H100_80GB")))
    assert error.field is not None and error.field.startswith("machine.") and error.line in (8, 9)


def test_missing_package_path(project):
    error = error_of(project(VERTEX_BASE.replace("path: trainer", "path: nowhere")))
    assert error.field == "package.path" and error.line == 11


def test_package_without_init(project, tmp_path):
    (tmp_path / "trainer" / "__init__.py").unlink()
    error = error_of(project())
    assert error.field == "package.path" and "__init__.py" in str(error)


def test_module_not_in_package(project):
    error = error_of(project(VERTEX_BASE.replace("module: trainer.task", "module: trainer.missing")))
    assert error.field == "package.module" and "trainer.task" in str(error)


def test_cloud_specific_required_fields(project):
    error = error_of(project(VERTEX_BASE.replace("project: my-project\n", "")))
    assert error.field == "project"
    error = error_of(project(VERTEX_BASE.replace("gs://my-bucket", "s3://my-bucket")))
    assert error.field == "staging_bucket" and "gs://" in str(error)


def test_local_needs_no_cloud_fields(project):
    text = VERTEX_BASE.replace("project: my-project\n", "").replace("staging_bucket: gs://my-bucket\n", "")
    cfg = load_config(project(text), local=True).config
    assert (cfg.backend, cfg.target, cfg.cloud) == ("local", "vertex", "vertex")


def test_set_overrides_and_points_at_set(project):
    cfg = load_config(project(), ["machine.accelerator_count=2", "replica_count=3", "args=[--epochs, '2']"]).config
    assert (cfg.machine.accelerator_count, cfg.replica_count, cfg.args) == (2, 3, ["--epochs", "2"])
    error = error_of(project(), "replica_count=-1")
    assert error.file == "--set" and error.field == "replica_count"
    cfg = load_config(project(), ["labels={team: ml, env: dev}"]).config
    assert cfg.labels == {"team": "ml", "env": "dev"}
    error = error_of(project(), "noequals")
    assert "KEY=VALUE" in str(error)


SAGEMAKER_BASE = """\
name: sm
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/R
staging_bucket: s3://b
machine: {type: ml.g4dn.12xlarge}
package: {path: trainer}
"""


def test_sagemaker_spot_max_wait_must_cover_runtime(project):
    error = error_of(project(SAGEMAKER_BASE + "max_runtime: 2h\nspot: {enabled: true, max_wait: 1h}\n"))
    assert error.field == "spot.max_wait" and error.line == 9


def test_vertex_only_settings_are_refused_on_sagemaker(project):
    error = error_of(project(SAGEMAKER_BASE + "service_account: sa@p.iam.gserviceaccount.com\n"))
    assert error.field == "service_account" and error.line == 8 and "role_arn" in str(error)


def test_duplicate_keys_are_refused(project):
    error = error_of(project(VERTEX_BASE + "region: us-east1\n"))
    assert "duplicate key 'region'" in str(error) and error.line == 13
