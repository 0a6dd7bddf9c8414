"""Prepare a job: config → spec, spec → package, staged data, the fallback candidates. Nothing here prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cloudtrain.app.notices import Notice, Notify, ignore
from cloudtrain.backend_rules import Capability
from cloudtrain.backends import get_backend
from cloudtrain.backends.base import Backend
from cloudtrain.config.load import load_config, load_document
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.yaml12 import LoadedYaml
from cloudtrain.data.staging import stage
from cloudtrain.errors import UsageError
from cloudtrain.history import cache_dir
from cloudtrain.packaging import BuiltPackage, SdistOptions, build_script_sdist, build_sdist
from cloudtrain.packaging.metadata import replaced_tensorflow
from cloudtrain.secrets.job import sdist_files
from cloudtrain.secrets.masking import env_warnings, mask_logs, masked_repr, secret_values
from cloudtrain.spec import JobSpec, ResumeSpec, build_spec


def load_spec(
    config_path: str | Path | LoadedYaml | None,
    overrides: Sequence[str],
    *,
    local: bool = False,
    strict: bool = False,
    environ: Mapping[str, str] | None = None,
) -> tuple[LoadedConfig, JobSpec]:
    """The one loading of a job: a config file, or a document a backend's command wrote from its flags
    (its relative paths then from the working folder; ``environ``: the environment it is read with)."""
    if not config_path:
        raise UsageError("no config given", hint="pass --config job_configs/gpu4.yaml")
    if isinstance(config_path, LoadedYaml):
        loaded = load_document(
            config_path,
            overrides,
            local=local,
            strict=strict,
            base=Path.cwd(),
            environ=environ,
        )
    else:
        loaded = load_config(config_path, overrides, local=local, strict=strict)
    return loaded, build_spec(loaded)


def build_package(spec: JobSpec, notify: Notify = ignore) -> BuiltPackage | None:
    """The sdist of the spec's package; None for a ``container:`` job, which runs the user's own image."""
    if spec.container:
        return None
    source, out_dir = spec.package, cache_dir() / "packages"
    options = SdistOptions(
        name=source.name,
        version=source.version,
        requirements=source.requirements,
        given_in=str(spec.config_file),
        extra=sdist_files(spec.secrets),
        include=source.include,
    )
    if source.script:
        package = build_script_sdist(source.path, out_dir, source.script, **options)
    else:
        package = build_sdist(source.path, out_dir, **options)
    for warning in package.warnings:
        notify(Notice("warning", warning))
    if replaced := replaced_tensorflow(package.requirements, spec.tensorflow_version):
        notify(
            Notice(
                "warning",
                f"package requirement {replaced[0]} replaces the image's TensorFlow {spec.tensorflow_version}: "
                f"TensorFlow {replaced[1]} runs (pip installs it over the image's) — remove the pin, or set "
                f'image.tensorflow: "{".".join(replaced[1].split(".")[:2])}"',
            )
        )
    return package


def stage_data(spec: JobSpec) -> JobSpec:
    """Hash the local-folder data channels of a cloud job (their upload prefix is in the request)."""
    if not spec.channels:
        return spec
    staged: JobSpec = stage(spec, hash_cache_root=cache_dir() / "data-hashes")
    return staged


def package_dict(package: BuiltPackage | None) -> dict[str, Any] | None:
    if package is None:
        return None
    return {
        "file": str(package.path),
        "sha256": package.sha256,
        "size": package.size,
        "unpacked_size": package.unpacked_size,
        "metadata": package.metadata,
        "left_out": [{"path": path, "why": why} for path, why in package.left_out],
    }


def left_out(package: BuiltPackage) -> str | None:
    """``trainer/.env (environment file), …``: what a user may expect in the package but is not."""
    return ", ".join(f"{path} ({why})" for path, why in package.left_out) or None


@dataclass(frozen=True, repr=False)  # its own __repr__ masks secrets: no generated one to compile
class Prepared:
    """A job ready to plan or submit: its config, its spec (then one per ``fallback:`` entry), its package."""

    loaded: LoadedConfig
    spec: JobSpec
    package: BuiltPackage | None  # None for a ``container:`` job
    candidates: tuple[JobSpec, ...]  # spec first, then each fallback entry
    overrides: tuple[str, ...] = ()
    notices: list[Notice] = field(default_factory=list, compare=False)

    def __repr__(self) -> str:  # its overrides may set env: values (--set env.DB_PASSWORD=…)
        spec = self.spec
        return masked_repr(self, secret_values(spec.env, spec.args, spec.hyperparameters))


def prepare(
    loaded: LoadedConfig,
    spec: JobSpec,
    *,
    overrides: Sequence[str] = (),
    show_secrets: bool = False,
    notify: Notify = ignore,
) -> Prepared:
    """Build the package and stage the data of ``spec``. ``env:`` values that look secret are sent as
    written but masked in cloudtrain's own log lines (with one warning) unless ``show_secrets``."""
    notices: list[Notice] = []

    def tell(notice: Notice) -> None:
        notices.append(notice)
        notify(notice)

    for warning in env_warnings(spec.env):
        tell(Notice("warning", warning))
    if not show_secrets:
        mask_logs(secret_values(spec.env, spec.args, spec.hyperparameters))
    package = build_package(spec, tell)
    follows = spec.backend if Capability.CLUSTER in get_backend(spec.backend).facts.capabilities else spec.cloud
    for warning in get_backend(follows).spec_warnings(spec):  # a cluster's own: its jobs reach no contract's cloud
        tell(Notice("warning", warning))
    spec = stage_data(spec)
    return Prepared(loaded, spec, package, tuple(candidate_specs(loaded, spec)), tuple(overrides), notices)


def candidate_specs(loaded: LoadedConfig, spec: JobSpec) -> list[JobSpec]:
    """The main spec, then one per ``fallback:`` entry (each validated when the config was loaded); a
    fallback cannot change the package, so each takes the main one's (``--include`` included)."""
    return [spec] + [
        stage_data(replace(build_spec(candidate, now=spec.created), package=spec.package))
        for candidate in loaded.candidates
    ]


def with_include(spec: JobSpec, include: Sequence[str]) -> JobSpec:
    """``--include``: package files that look like credentials and would be left out."""
    return replace(spec, package=replace(spec.package, include=tuple(include))) if include else spec


def resumed(spec: JobSpec, backend: Backend, job_id: str) -> JobSpec:
    """``spec`` continuing ``job_id``'s checkpoints: where they are comes from the job itself."""
    status = backend.attach(job_id, region=spec.region, project=spec.project).status()
    checkpoint_dir = status.detail("checkpoint_dir")
    if not checkpoint_dir:
        raise UsageError(
            f"--resume {job_id}: the job has no checkpoint location",
            hint="a SageMaker job needs a CheckpointConfig (cloudtrain sets one on every job it submits)",
        )
    output_dir = status.detail("output_dir")
    return replace(spec, resume=ResumeSpec(job_id, str(checkpoint_dir), str(output_dir) if output_dir else None))
