"""gcloud's command lines as config documents: pure functions, no I/O.

``gcloud ml-engine|ai-platform jobs submit training`` becomes an ML Engine document (:mod:`.mlengine` reads it),
``gcloud ai custom-jobs create`` a ``CustomJobSpec`` document (:mod:`.customjob`); their local forms
(``ai-platform local train``, ``custom-jobs local-run``) the same two, with gcloud's defaults for them (one
machine; ``--distributed``: 2 workers and 2 parameter servers). As in gcloud, flags win over ``--config``. Every
value a flag sets remembers the flag (``LoadedYaml.flags``), so an error names ``--region``, not a file line;
flags with no cloudtrain meaning are refused, one line each (:data:`REFUSED_FLAGS`)."""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cloudtrain.backends.vertex.mlengine import camel
from cloudtrain.config.yaml12 import LoadedYaml, Path_
from cloudtrain.errors import UsageError

COMMAND_LINE = "command line"
_TI = "trainingInput"

#: ``gcloud ml-engine jobs submit training`` flag → where its value goes in the document.
MLENGINE_FLAGS: dict[str, Path_] = {  # in the order of `ml-engine jobs submit training --help`
    "--job-dir": (_TI, "jobDir"),
    "--package-path": ("package", "path"),
    "--module-name": (_TI, "pythonModule"),
    "--staging-bucket": ("staging_bucket",),
    "--region": (_TI, "region"),
    "--scale-tier": (_TI, "scaleTier"),
    "--master-machine-type": (_TI, "masterType"),
    "--master-accelerator": (_TI, "masterConfig", "acceleratorConfig"),
    "--master-image-uri": (_TI, "masterConfig", "imageUri"),
    "--worker-count": (_TI, "workerCount"),
    "--worker-machine-type": (_TI, "workerType"),
    "--worker-accelerator": (_TI, "workerConfig", "acceleratorConfig"),
    "--worker-image-uri": (_TI, "workerConfig", "imageUri"),
    "--parameter-server-count": (_TI, "parameterServerCount"),
    "--parameter-server-machine-type": (_TI, "parameterServerType"),
    "--runtime-version": (_TI, "runtimeVersion"),
    "--python-version": (_TI, "pythonVersion"),
    "--labels": ("labels",),
    "--project": ("project",),
    "--service-account": (_TI, "serviceAccount"),
}
#: ``gcloud ai custom-jobs create`` flags that set cloudtrain keys directly.
CUSTOM_JOB_FLAGS: dict[str, Path_] = {
    "--region": ("region",),
    "--project": ("project",),
    "--labels": ("labels",),
    "--service-account": ("service_account",),
    "--network": ("network",),
    "--args": ("args",),
    "--command": ("container", "command"),
}
#: Flags cloudtrain cannot honour: flag → (why, what to do instead).
REFUSED_FLAGS: dict[str, tuple[str, str]] = {
    "--packages": (
        "cloudtrain builds one package from --package-path; prebuilt archives are not uploaded",
        "put dependencies in the package's requirements.txt (or package.requirements)",
    ),
    "--python-package-uris": (
        "cloudtrain builds and stages the package itself",
        "pass the source folder: --worker-pool-spec …,local-package-path=./trainer",
    ),
    "--kms-key": ("customer-managed encryption keys are not supported", "drop the --kms-* flags"),
    "--kms-keyring": ("customer-managed encryption keys are not supported", "drop the --kms-* flags"),
    "--kms-location": ("customer-managed encryption keys are not supported", "drop the --kms-* flags"),
    "--kms-project": ("customer-managed encryption keys are not supported", "drop the --kms-* flags"),
    "--enable-web-access": ("interactive shell access is not supported", "drop --enable-web-access"),
    "--enable-dashboard-access": ("dashboard access is not supported", "drop --enable-dashboard-access"),
    "--persistent-resource-id": ("persistent resources are not supported", "drop --persistent-resource-id"),
    "--parameter-server-accelerator": (
        "parameter servers become workers on the master's machine",
        "drop it; --master-accelerator sets every replica's GPUs",
    ),
    "--parameter-server-image-uri": ("parameter servers become workers running the master's image", "drop it"),
    "--use-chief-in-tf-config": (
        "TF_CONFIG always names the chief on Vertex AI (and cloudtrain's trainer expects it)",
        "drop the flag",
    ),
    "--tpu-tf-version": (
        "a Vertex AI TPU VM runs the prebuilt TPU image of --runtime-version (BASIC_TPU maps to one)",
        "drop --tpu-tf-version; set --runtime-version",
    ),
    "--format": ("gcloud's output formats are not supported", "use -o json"),
    "--account": ("cloudtrain uses Application Default Credentials", "run gcloud auth application-default login"),
    "--impersonate-service-account": (
        "cloudtrain uses Application Default Credentials",
        "impersonate through the credentials file",
    ),
    "--evaluator-count": (
        "cloudtrain runs no evaluator replica (Vertex AI has none)",
        "drop --evaluator-count; evaluate in the chief",
    ),
    "--extra-packages": (
        "cloudtrain installs the package's own requirements, not extra archives",
        "list them in --requirements or the package's setup.py",
    ),
    "--extra-dirs": ("cloudtrain packages the code folder alone", "move the folders into --local-package-path"),
    "--output-image-uri": ("a local run builds no Docker image", "drop --output-image-uri"),
    "--service-account-key-file": (
        "a local run uses this machine's Application Default Credentials",
        "set GOOGLE_APPLICATION_CREDENTIALS=KEY.json before the run",
    ),
}
#: ``--worker-pool-spec`` keys → (pool path, or a cloudtrain key for the code folder).
_POOL_SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "machine-type": ("machineSpec", "machineType"),
    "accelerator-type": ("machineSpec", "acceleratorType"),
    "accelerator-count": ("machineSpec", "acceleratorCount"),
    "replica-count": ("replicaCount",),
    "executor-image-uri": ("pythonPackageSpec", "executorImageUri"),
    "python-module": ("pythonPackageSpec", "pythonModule"),
    "container-image-uri": ("containerSpec", "imageUri"),
    "boot-disk-size": ("diskSpec", "bootDiskSizeGb"),
    "boot-disk-type": ("diskSpec", "bootDiskType"),
}
_POOL_PACKAGE_KEYS = {"local-package-path": "path", "requirements": "requirements", "script": "script"}


def refuse_flags(given: Mapping[str, Any]) -> None:
    """One line for the first flag given that cloudtrain cannot honour."""
    for flag, value in given.items():
        if flag in REFUSED_FLAGS and value not in (None, False, (), [], ""):
            why, fix = REFUSED_FLAGS[flag]
            raise UsageError(f"{flag}: {why}", hint=fix)


def key_values(text: str, flag: str) -> dict[str, str]:
    """``type=nvidia-tesla-t4,count=4`` → ``{"type": …, "count": "4"}`` (gcloud's dict flags)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag}: {part!r} is not KEY=VALUE", hint=f"e.g. {flag} type=nvidia-tesla-t4,count=4")
        out[key.strip()] = value.strip()
    return out


def mlengine_document(
    job: str, flags: Mapping[str, Any], user_args: Sequence[str], config: LoadedYaml | None
) -> LoadedYaml:
    """``ml-engine jobs submit training JOB`` → an ML Engine document, flags over the ``--config`` file."""
    refuse_flags(flags)
    doc = _start(config)
    doc.data.setdefault(_TI, {})
    if not isinstance(doc.data[_TI], dict):
        raise doc.error((_TI,), "must be a mapping", "see job_configs/legacy-mlengine.yaml")
    _set_flags(doc, MLENGINE_FLAGS, flags)
    if user_args:
        _set(doc, (_TI, "args"), list(user_args), "--")
    _set(doc, ("name",), job, "JOB")
    _set(doc, ("name_suffix",), False, "JOB")
    return doc


#: ``gcloud ai-platform local train --distributed``'s replicas when no count is given (gcloud's defaults).
LOCAL_DISTRIBUTED_DEFAULT = 2
#: The region a local form's job is checked against when none is given: gcloud's local forms take none,
#: and a local run never reaches it (the catalog's machines and images are Vertex AI's in every region).
LOCAL_REGION = "us-central1"
#: The machine each replica of a local form stands for: ML Engine's BASIC tier (``standard``).
LOCAL_MACHINE = "n1-standard-4"


def local_train_document(
    flags: Mapping[str, Any], user_args: Sequence[str], config: LoadedYaml | None, *, distributed: bool
) -> LoadedYaml:
    """``ai-platform local train`` → the ML Engine document ``jobs submit training`` would write: one
    machine, or with ``--distributed`` a chief, workers and parameter servers (2 each unless counted);
    without ``--distributed`` the counts are ignored, as gcloud ignores them."""
    if not flags.get("--module-name"):
        raise UsageError("--module-name is required", hint="e.g. --module-name trainer.task --package-path trainer/")
    counts = ("--worker-count", "--parameter-server-count")
    given = {
        **{flag: value for flag, value in flags.items() if flag not in counts},
        **({f: flags.get(f) or str(LOCAL_DISTRIBUTED_DEFAULT) for f in counts} if distributed else {}),
    }
    doc = mlengine_document(_local_name(str(flags["--module-name"])), given, user_args, config)
    if distributed:  # CUSTOM with BASIC's machine for every replica: the tier of a local chief and workers
        for key, value in (("scaleTier", "CUSTOM"), ("masterType", LOCAL_MACHINE), ("workerType", LOCAL_MACHINE)):
            _set(doc, (_TI, key), value, "--distributed")
        if int(doc.data[_TI].get("parameterServerCount") or 0):
            _set(doc, (_TI, "parameterServerType"), LOCAL_MACHINE, "--distributed")
    if not (doc.data[_TI].get("region") or doc.data.get("region")):
        _set(doc, (_TI, "region"), LOCAL_REGION, "local train")
    _set(doc, ("name_suffix",), True, "local train")
    return doc


def local_run_document(flags: Mapping[str, Any], user_args: Sequence[str], config: LoadedYaml | None) -> LoadedYaml:
    """``ai custom-jobs local-run`` → the ``CustomJobSpec`` document of one pool ``custom-jobs create`` would
    write for the same image, module or script, code folder and requirements."""
    image, module, script = (flags.get(f) for f in ("--executor-image-uri", "--python-module", "--script"))
    if not image:
        raise UsageError(
            "--executor-image-uri is required",
            hint="e.g. --executor-image-uri us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest",
        )
    if bool(module) == bool(script):
        raise UsageError("give one of --python-module and --script", hint="e.g. --python-module trainer.task")
    refuse_flags(flags)
    pool = f"machine-type=n1-standard-4,replica-count=1,executor-image-uri={image}"
    pool += f",python-module={module}" if module else ""
    doc = custom_job_document(_local_name(str(module or script)), {"--worker-pool-spec": (pool,)}, config)
    package = {
        "path": flags.get("--local-package-path") or ".",
        "script": script,
        "requirements": [r for r in str(flags.get("--requirements") or "").split(",") if r.strip()],
    }
    for key, value in package.items():
        if value:
            _set(doc, ("package", key), value, f"--{'local-package-path' if key == 'path' else key}")
    if user_args:
        _set(doc, ("args",), list(user_args), "--")
    if not doc.data.get("region"):
        _set(doc, ("region",), LOCAL_REGION, "local-run")
    _set(doc, ("name_suffix",), True, "local-run")
    return doc


def _local_name(code: str) -> str:
    """A job name from the module or script run (``trainer.task`` → ``trainer-task``); each run gets a suffix."""
    return re.sub(r"[^a-z0-9]+", "-", code.lower().removesuffix(".py")).strip("-")[:40] or "local"


def custom_job_document(display_name: str, flags: Mapping[str, Any], config: LoadedYaml | None) -> LoadedYaml:
    """``ai custom-jobs create`` → a ``CustomJobSpec`` document with cloudtrain keys beside it."""
    refuse_flags(flags)
    doc = _start(config)
    specs = flags.get("--worker-pool-spec") or ()
    if specs:
        pools: list[dict[str, Any]] = []
        for text in specs:
            pool, package = worker_pool_spec(text)
            pools.append(pool)
            for key, value in package.items():
                _set(doc, ("package", key), value, "--worker-pool-spec")
        for key in [k for k in doc.data if camel(k) == "workerPoolSpecs"]:
            del doc.data[key]
        _set(doc, ("workerPoolSpecs",), pools, "--worker-pool-spec")
    elif not config:
        raise UsageError(
            "give --config FILE (a CustomJobSpec) or --worker-pool-spec",
            hint="e.g. --worker-pool-spec machine-type=n1-standard-4,replica-count=1,"
            "executor-image-uri=…,python-module=trainer.task,local-package-path=./trainer",
        )
    _set_flags(doc, CUSTOM_JOB_FLAGS, flags)
    _set(doc, ("name",), display_name, "--display-name")
    _set(doc, ("name_suffix",), False, "--display-name")
    return doc


def worker_pool_spec(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One ``--worker-pool-spec`` → (the worker pool, cloudtrain ``package`` keys)."""
    pool: dict[str, Any] = {}
    package: dict[str, Any] = {}
    for key, value in key_values(text, "--worker-pool-spec").items():
        if key in _POOL_PACKAGE_KEYS:
            name = _POOL_PACKAGE_KEYS[key]
            package[name] = [r for r in re.split(r"[;]", value) if r] if name == "requirements" else value
            continue
        if key not in _POOL_SPEC_KEYS:
            allowed = ", ".join([*_POOL_SPEC_KEYS, *_POOL_PACKAGE_KEYS])
            raise UsageError(f"--worker-pool-spec: unknown key {key!r}", hint=f"allowed: {allowed}")
        target = pool
        *parents, leaf = _POOL_SPEC_KEYS[key]
        for part in parents:
            target = target.setdefault(part, {})
        numeric = key in ("accelerator-count", "replica-count", "boot-disk-size")
        target[leaf] = _int(value, f"--worker-pool-spec {key}") if numeric else value
    root, top = package.get("path"), str(pool.get("pythonPackageSpec", {}).get("pythonModule", "")).split(".")[0]
    if root and top and os.path.isdir(os.path.join(root, top)) and not os.path.isfile(f"{root}/__init__.py"):
        package["path"] = os.path.join(root, top)  # gcloud's folder holds setup.py and the module's package
    return pool, package


def _start(config: LoadedYaml | None) -> LoadedYaml:
    if config is None:
        return LoadedYaml(data={}, file=COMMAND_LINE)
    return LoadedYaml(
        data=copy.deepcopy(config.data), file=config.file, lines=dict(config.lines), flags=dict(config.flags)
    )


def _set_flags(doc: LoadedYaml, table: Mapping[str, Path_], flags: Mapping[str, Any]) -> None:
    """Each flag of ``table`` that was given, as the document holds it, at its path (labels join the file's)."""
    for flag, path in table.items():
        value = flags.get(flag)
        if value in (None, (), ""):
            continue
        if flag in ("--master-accelerator", "--worker-accelerator"):
            accel = key_values(value, flag)
            if "type" not in accel:
                raise UsageError(f"{flag} needs type=…", hint=f"e.g. {flag} type=nvidia-tesla-t4,count=4")
            value = {"type": accel["type"], "count": _int(accel.get("count", "1"), flag)}
        elif flag == "--labels":
            value = {**(doc.data.get("labels") or {}), **key_values(value, flag)}
        elif flag == "--scale-tier":
            value = str(value).upper().replace("-", "_")
        elif flag in ("--args", "--command"):
            value = [a for a in str(value).split(",") if a]
        _set(doc, path, value, flag)


def _set(doc: LoadedYaml, path: Path_, value: Any, flag: str) -> None:
    """Put ``value`` at ``path``, replacing the key in any spelling (``master_type``) the file used."""
    target = doc.data
    walked: list[str | int] = []
    for part in path[:-1]:
        key = _spelled(target, str(part))
        if not isinstance(target.get(key), dict):
            target[key] = {}
        target = target[key]
        walked.append(key)
    leaf = str(path[-1])
    for key in [k for k in target if k != leaf and camel(k) == leaf]:
        del target[key]
    target[leaf] = value
    doc.flags[tuple([*walked, leaf])] = flag


def _spelled(mapping: dict[str, Any], key: str) -> str:
    """The key the file used for ``key`` (``master_config`` for ``masterConfig``), else ``key``."""
    return next((k for k in mapping if camel(k) == key), key)


def _int(value: str, flag: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{flag}: {value!r} is not a whole number") from None
