"""Read the AI Platform / ML Engine ``trainingInput`` format and map it to a cloudtrain config.

Users migrating from ``gcloud ml-engine jobs submit training --config config_gpu4.yaml``
still have files like::

    trainingInput:
      scaleTier: CUSTOM
      masterType: complex_model_m_gpu
      workerCount: 0

Keys may be camelCase or snake_case (gcloud took both). Keys next to ``trainingInput``
(``name``, ``project``, ``staging_bucket``, ``package``, ...) are cloudtrain keys and win.
Machine types that no longer exist (the K80 tiers) are refused with a named replacement.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from cloudtrain.config.yaml12 import LoadedYaml, Path_
from cloudtrain.errors import ConfigError

#: Legacy machine name → (machine type, accelerator, count); None for the accelerator = CPU only.
LEGACY_MACHINES: dict[str, tuple[str, str | None, int]] = {
    "standard": ("n1-standard-4", None, 0),
    "large_model": ("n1-highmem-8", None, 0),
    "complex_model_s": ("n1-highcpu-8", None, 0),
    "complex_model_m": ("n1-highcpu-16", None, 0),
    "complex_model_l": ("n1-highcpu-32", None, 0),
    "standard_p100": ("n1-standard-8", "NVIDIA_TESLA_P100", 1),
    "complex_model_m_p100": ("n1-standard-16", "NVIDIA_TESLA_P100", 4),
    "standard_v100": ("n1-standard-8", "NVIDIA_TESLA_V100", 1),
    "large_model_v100": ("n1-highmem-8", "NVIDIA_TESLA_V100", 1),
    "complex_model_m_v100": ("n1-standard-16", "NVIDIA_TESLA_V100", 4),
    "complex_model_l_v100": ("n1-standard-32", "NVIDIA_TESLA_V100", 8),
}
#: Legacy machines built on hardware Vertex AI no longer offers → the replacement to name.
RETIRED_MACHINES: dict[str, tuple[str, str, int]] = {
    "standard_gpu": ("n1-standard-8", "NVIDIA_TESLA_T4", 1),
    "complex_model_m_gpu": ("n1-standard-16", "NVIDIA_TESLA_T4", 4),
    "complex_model_l_gpu": ("n1-standard-32", "NVIDIA_TESLA_V100", 8),
}
#: scaleTier → legacy machine (None: CUSTOM, read masterType).
SCALE_TIERS: dict[str, str | None] = {
    "BASIC": "standard",
    "BASIC_GPU": "standard_gpu",
    "CUSTOM": None,
}
_KNOWN_KEYS = {
    "scaleTier", "masterType", "masterConfig", "workerType", "workerCount", "workerConfig",
    "parameterServerCount", "parameterServerType", "parameterServerConfig", "region",
    "runtimeVersion", "pythonVersion", "jobDir", "args", "pythonModule", "packageUris",
    "scheduling", "serviceAccount", "network", "useChiefInTfConfig", "evaluatorCount", "hyperparameters",
}  # fmt: skip


def is_legacy(data: Any) -> bool:
    return isinstance(data, dict) and "trainingInput" in data


def _camel(key: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def convert(loaded: LoadedYaml) -> dict[str, Any]:
    """Turn a legacy document into cloudtrain's dict, re-pointing line numbers at the old keys."""
    data = loaded.data
    ti_raw = data["trainingInput"]
    ti_line = loaded.line_of(("trainingInput",))
    originals: dict[str, str] = {}

    def _orig(path: Path_) -> Path_:
        return tuple(originals.get(p, p) if isinstance(p, str) else p for p in path)

    def fail(message: str, key: str | None, hint: str) -> ConfigError:
        path: Path_ = ("trainingInput", *(k for k in [key] if k))
        return ConfigError(message, file=loaded.file, line=loaded.line_of(_orig(path)), field=".".join(map(str, path)), hint=hint)

    if not isinstance(ti_raw, dict):
        raise fail("must be a mapping", None, "see `cloudtrain schema` or job_configs/legacy-mlengine.yaml")
    originals.update({_camel(k): k for k in ti_raw})
    ti = {_camel(k): v for k, v in ti_raw.items()}

    for key in ti:
        if key not in _KNOWN_KEYS:
            raise fail(f"unknown trainingInput key {originals[key]!r}", key, "remove it or check the ML Engine docs")

    out: dict[str, Any] = {k: v for k, v in data.items() if k not in ("trainingInput", "trainingOutput", "jobId")}
    lines: dict[Path_, int] = {}

    def put(path: tuple[str, ...], value: Any, source_key: str) -> None:
        target = out
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target.setdefault(path[-1], value)
        lines[path] = loaded.line_of(_orig(("trainingInput", source_key))) or ti_line or 1

    out.setdefault("backend", "vertex")
    out.setdefault("name", _name_from_file(loaded.file))

    tier = str(ti.get("scaleTier", "CUSTOM")).upper()
    if tier not in SCALE_TIERS:
        raise fail(
            f"scaleTier {tier} (several workers with parameter servers) has no equivalent",
            "scaleTier",
            "use scaleTier: CUSTOM with masterType, workerType and workerCount",
        )
    legacy_machine = SCALE_TIERS[tier] or ti.get("masterType")
    source = "scaleTier" if SCALE_TIERS[tier] else "masterType"
    if not legacy_machine:
        raise fail("scaleTier CUSTOM needs masterType", "scaleTier", "add masterType: n1-standard-8 (for example)")
    machine_type, accelerator, count = _machine(legacy_machine, source, fail)
    accel_cfg = (ti.get("masterConfig") or {}).get("acceleratorConfig") or {}
    if accel_cfg:
        accelerator, count = accel_cfg.get("type", accelerator), accel_cfg.get("count", count or 1)
        source = "masterConfig"
    put(("machine", "type"), machine_type, "masterType" if "masterType" in ti else "scaleTier")
    if accelerator:
        put(("machine", "accelerator"), accelerator, source)
        put(("machine", "accelerator_count"), count, source)

    if ti.get("parameterServerCount"):
        raise fail(
            "parameter servers are not supported: cloudtrain trains with MultiWorkerMirroredStrategy (all-reduce)",
            "parameterServerCount",
            "remove parameterServerCount and keep workerCount",
        )
    workers = ti.get("workerCount", 0)
    if workers:
        worker_type = ti.get("workerType", legacy_machine)
        if worker_type != legacy_machine or ti.get("workerConfig", ti.get("masterConfig")) != ti.get("masterConfig"):
            raise fail(
                "workers must use the same machine as the master (one machine spec for all replicas)",
                "workerType",
                f"set workerType: {legacy_machine} and the same acceleratorConfig",
            )
        put(("replica_count",), 1 + workers, "workerCount")

    image = (ti.get("masterConfig") or {}).get("imageUri")
    if image:
        put(("image", "uri"), image, "masterConfig")
    runtime = ti.get("runtimeVersion")
    if runtime is not None and not image:
        runtime = str(runtime)
        if runtime.startswith("1."):
            raise fail(
                f"runtimeVersion {runtime} is TensorFlow 1, which Vertex AI's prebuilt images no longer offer",
                "runtimeVersion",
                'migrate to TensorFlow 2 and set runtimeVersion: "2.17"',
            )
        put(("image", "tensorflow"), runtime, "runtimeVersion")
    simple = {"region": ("region",), "args": ("args",), "pythonModule": ("package", "module"),
              "jobDir": ("output_dir",), "serviceAccount": ("service_account",), "network": ("network",)}  # fmt: skip
    for key, path in simple.items():
        if key in ti:
            put(path, ti[key], key)
    timeout = (ti.get("scheduling") or {}).get("maxRunningTime")
    if timeout:
        put(("max_runtime",), timeout, "scheduling")
    if ti.get("packageUris"):
        raise fail(
            "packageUris points at prebuilt packages; cloudtrain builds the package itself",
            "packageUris",
            "remove packageUris and set package.path to the package directory",
        )

    if "hyperparameters" in ti:
        from cloudtrain.config.legacy_sweep import convert_hyperparameters

        put(("sweep",), convert_hyperparameters(ti_raw[originals["hyperparameters"]], fail), "hyperparameters")

    for path, line in lines.items():
        loaded.lines.setdefault(path, line)
    return out


def _machine(name: str, key: str, fail) -> tuple[str, str | None, int]:
    if name in RETIRED_MACHINES:
        machine, accel, count = RETIRED_MACHINES[name]
        raise fail(
            f"{name} ran on NVIDIA K80 GPUs, which Vertex AI no longer offers",
            key,
            f"use masterType: {machine} with masterConfig.acceleratorConfig {{type: {accel}, count: {count}}}",
        )
    return LEGACY_MACHINES.get(name, (name, None, 0))


def _name_from_file(file: str) -> str:
    stem = re.sub(r"[^a-z0-9-]+", "-", PurePath(file).stem.lower()).strip("-")
    return (stem if stem[:1].isalpha() else f"job-{stem}")[:40].rstrip("-") or "job"
