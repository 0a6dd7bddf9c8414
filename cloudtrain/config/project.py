"""Which Google Cloud project a Vertex job runs in, the first that names one: ``--project``, the config's ``project``,
``CLOUDSDK_CORE_PROJECT``, gcloud's active configuration, ``GOOGLE_CLOUD_PROJECT``, the ADC's ``quota_project_id`` then
``project_id``. Files are read, never run (google-auth's own lookup would run ``gcloud``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path


def gcloud_dir(environ: Mapping[str, str], home: Path) -> Path:
    return Path(environ["CLOUDSDK_CONFIG"]) if environ.get("CLOUDSDK_CONFIG") else home / ".config" / "gcloud"


def find_project(
    flag: str | None,
    configured: tuple[str, str] | None,
    environ: Mapping[str, str],
    home: Path,
    *,
    configuration: str | None = None,
) -> tuple[str | None, str]:
    """``(project, where it came from)``; ``(None, what was searched)`` when nothing names one. ``configured``: the
    config's value and origin; ``configuration``: gcloud's ``--configuration``."""
    if flag:
        return flag, "--project"
    if configured and configured[0]:
        return configured
    if environ.get("CLOUDSDK_CORE_PROJECT"):
        return environ["CLOUDSDK_CORE_PROJECT"], "CLOUDSDK_CORE_PROJECT"
    folder = gcloud_dir(environ, home)  # the active configuration's file (which may not exist)
    name = (
        configuration
        or environ.get("CLOUDSDK_ACTIVE_CONFIG_NAME")
        or _read(folder / "active_config").strip()
        or "default"
    )
    file = folder / "configurations" / f"config_{name}"
    project = _ini_value(file, "core", "project")
    if project:
        return project, f"gcloud configuration {name!r} ({file})"
    if environ.get("GOOGLE_CLOUD_PROJECT"):
        return environ["GOOGLE_CLOUD_PROJECT"], "GOOGLE_CLOUD_PROJECT"
    adc = Path(
        environ.get("GOOGLE_APPLICATION_CREDENTIALS")
        or gcloud_dir(environ, home) / "application_default_credentials.json"
    )
    try:
        creds = json.loads(_read(adc) or "{}")
    except json.JSONDecodeError:
        creds = {}
    for key in ("quota_project_id", "project_id"):
        if isinstance(creds, dict) and isinstance(creds.get(key), str) and creds[key]:
            return creds[key], f"Application Default Credentials ({adc}, {key})"
    return None, f"--project, project:, CLOUDSDK_CORE_PROJECT, {file}, GOOGLE_CLOUD_PROJECT, {adc}"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _ini_value(path: Path, section: str, key: str) -> str | None:
    import configparser  # only when a gcloud configuration is read

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_read(path))
    except configparser.Error:
        return None
    value = parser.get(section, key, fallback="").strip()
    return value or None
