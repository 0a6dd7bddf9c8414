"""The Vertex project, found in gcloud's order from files a test writes; gcloud is never run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.config.project import find_project
from cloudtrain.errors import ConfigError
from tests.conftest import VERTEX_BASE


def gcloud_folder(root: Path, projects: dict[str, str], active: str | None) -> Path:
    """A folder as `gcloud config configurations create/activate` and `config set project` leave it."""
    folder = root / "gcloud"
    (folder / "configurations").mkdir(parents=True)
    for name, project in projects.items():
        (folder / "configurations" / f"config_{name}").write_text(
            f"[core]\naccount = me@example.com\nproject = {project}\n"
        )
    if active:
        (folder / "active_config").write_text(active)
    return folder


def adc(root: Path, **keys) -> Path:
    path = root / "adc.json"
    path.write_text(json.dumps({"type": "authorized_user", **keys}))
    return path


FULL = ["flag", "config", "CLOUDSDK_CORE_PROJECT", "gcloud", "GOOGLE_CLOUD_PROJECT", "adc_quota", "adc_project"]


@pytest.mark.parametrize("first", range(len(FULL)))
def test_each_source_wins_over_the_ones_after_it(tmp_path, first):
    present = FULL[first:]
    environ = {
        "CLOUDSDK_CONFIG": str(gcloud_folder(tmp_path, {"work": "from-gcloud"} if "gcloud" in present else {}, "work"))
    }
    if "CLOUDSDK_CORE_PROJECT" in present:
        environ["CLOUDSDK_CORE_PROJECT"] = "from-core-env"
    if "GOOGLE_CLOUD_PROJECT" in present:
        environ["GOOGLE_CLOUD_PROJECT"] = "from-google-env"
    keys = {"quota_project_id": "from-adc-quota"} if "adc_quota" in present else {}
    environ["GOOGLE_APPLICATION_CREDENTIALS"] = str(adc(tmp_path, project_id="from-adc-project", **keys))
    project, source = find_project(
        "from-flag" if "flag" in present else None,
        ("from-config", "job.yaml:4") if "config" in present else None,
        environ,
        tmp_path,
    )
    expected = {
        "flag": ("from-flag", "--project"),
        "config": ("from-config", "job.yaml:4"),
        "CLOUDSDK_CORE_PROJECT": ("from-core-env", "CLOUDSDK_CORE_PROJECT"),
        "gcloud": ("from-gcloud", "gcloud configuration 'work'"),
        "GOOGLE_CLOUD_PROJECT": ("from-google-env", "GOOGLE_CLOUD_PROJECT"),
        "adc_quota": ("from-adc-quota", "quota_project_id"),
        "adc_project": ("from-adc-project", "project_id"),
    }
    want_project, want_source = expected[FULL[first]]
    assert project == want_project and want_source in source


def test_active_config_name_from_the_environment_and_the_flag(tmp_path):
    folder = gcloud_folder(tmp_path, {"default": "p-default", "other": "p-other", "third": "p-third"}, None)
    environ = {"CLOUDSDK_CONFIG": str(folder)}
    assert find_project(None, None, environ, tmp_path)[0] == "p-default"  # no active_config file: "default"
    assert find_project(None, None, {**environ, "CLOUDSDK_ACTIVE_CONFIG_NAME": "other"}, tmp_path)[0] == "p-other"
    assert find_project(None, None, environ, tmp_path, configuration="third")[0] == "p-third"


def test_home_folder_is_used_without_cloudsdk_config(tmp_path):
    gcloud_folder(tmp_path / ".config", {"default": "p-home"}, "default")
    assert find_project(None, None, {}, tmp_path) == (
        "p-home",
        f"gcloud configuration 'default' ({tmp_path}/.config/gcloud/configurations/config_default)",
    )


def test_adc_in_gcloud_folder_and_nothing_found(tmp_path):
    folder = gcloud_folder(tmp_path, {}, None)
    assert find_project(None, None, {"CLOUDSDK_CONFIG": str(folder)}, tmp_path)[0] is None
    (folder / "application_default_credentials.json").write_text('{"quota_project_id": "q"}')
    assert find_project(None, None, {"CLOUDSDK_CONFIG": str(folder)}, tmp_path)[0] == "q"


def test_a_config_without_project_takes_it_from_gcloud(project, tmp_path, monkeypatch):
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(gcloud_folder(tmp_path, {"default": "gc-project"}, "default")))
    loaded = load_config(project(VERTEX_BASE.replace("project: my-project\n", "")))
    assert loaded.config.project == "gc-project" and "gcloud configuration 'default'" in str(loaded.project_source)
    assert str(load_config(project()).project_source).endswith("job.yaml:4")  # the config wins over gcloud


def test_no_project_anywhere_names_where_it_looked(project):
    with pytest.raises(ConfigError) as info:
        load_config(project(VERTEX_BASE.replace("project: my-project\n", "")))
    assert "CLOUDSDK_CORE_PROJECT" in str(info.value) and "gcloud config set project" in str(info.value)
