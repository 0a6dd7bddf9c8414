"""Steps several commands share: config → spec, spec → package, package → JSON."""

from __future__ import annotations

from typing import Any

import click

from cloudtrain.errors import UsageError


def load_spec(config_path: str | None, overrides, *, local: bool = False, strict: bool = False):
    from cloudtrain.config import load_config
    from cloudtrain.spec import build_spec

    if not config_path:
        raise UsageError("no config given", hint="pass --config job_configs/gpu4.yaml")
    loaded = load_config(config_path, overrides, local=local, strict=strict)
    return loaded, build_spec(loaded)


def build_package(spec):
    """The sdist of the spec's package; None for a ``container:`` job, which runs the user's own image."""
    if spec.container:
        return None
    from cloudtrain.history import cache_dir
    from cloudtrain.packaging import build_script_sdist, build_sdist
    from cloudtrain.secrets.job import sdist_files

    options = dict(name=spec.package.name, version=spec.package.version, requirements=spec.package.requirements,
                   given_in=str(spec.config_file), extra=sdist_files(spec.secrets),
                   include=spec.package.include)  # fmt: skip
    if spec.package.script:
        package = build_script_sdist(spec.package.path, cache_dir() / "packages", spec.package.script, **options)
    else:
        package = build_sdist(spec.package.path, cache_dir() / "packages", **options)
    for warning in package.warnings:
        click.echo(f"warning: {warning}", err=True)
    return package


def stage_data(spec):
    """Hash the local-folder data channels of a cloud job (their upload prefix is in the request)."""
    if not spec.channels:
        return spec
    from cloudtrain.data.staging import stage
    from cloudtrain.history import cache_dir

    return stage(spec, hash_cache_root=cache_dir() / "data-hashes")


def package_dict(package) -> dict[str, Any] | None:
    if package is None:
        return None
    return {"file": str(package.path), "sha256": package.sha256, "size": package.size,
            "unpacked_size": package.unpacked_size, "metadata": package.metadata,
            "left_out": [{"path": path, "why": why} for path, why in package.left_out]}  # fmt: skip


def left_out(package) -> str | None:
    """``trainer/.env (environment file), …``: what a user may expect in the package but is not."""
    return ", ".join(f"{path} ({why})" for path, why in package.left_out) or None


