"""Read the AI Platform / ML Engine ``trainingInput`` format (``gcloud ml-engine ... --config``) as a cloudtrain config.

Keys may be camelCase or snake_case (gcloud took both). Keys beside ``trainingInput`` are cloudtrain keys and win
over what ``trainingInput`` does not say; one said both ways differently is an error, not a silent choice. Flags
and ``--set`` override either, as gcloud's flags override its file. What no cloud offers any more maps to its
nearest with a *note* (an error under ``--strict-legacy``): retired GPUs to the cheapest at least as fast, TPU
tiers to a Vertex TPU VM (a GPU on SageMaker), parameter servers to workers, TF 1 runtimes to the default TF 2
image, 2.x runtimes to the nearest offered."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import PurePath
from typing import Any, NamedTuple

from cloudtrain import catalog
from cloudtrain.backends.vertex.mlengine_sweep import convert_hyperparameters
from cloudtrain.catalog import crosscloud, tpus
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.catalog.table import table
from cloudtrain.config.yaml12 import LoadedYaml, Path_
from cloudtrain.errors import ConfigError, ConfigErrors
from cloudtrain.text import counted, mapped_line

_LABEL = {"vertex": "Vertex AI", "sagemaker": "SageMaker"}
#: The accelerator of ML Engine's TPU machines: a Cloud TPU v2 device, a TPU VM on Vertex AI.
_ML_ENGINE_TPU = "TPU_V2"


class LegacyMachine(NamedTuple):
    machine_type: str  # the Compute Engine type ML Engine used
    vcpus: int
    memory_gb: float
    gpu: str | None  # GPU model ("K80"), None for CPU only
    gpu_count: int


#: ML Engine's legacy machine names, as its machine-types page documented them.
LEGACY_MACHINES: dict[str, LegacyMachine] = {
    "standard": LegacyMachine("n1-standard-4", 4, 15, None, 0),
    "large_model": LegacyMachine("n1-highmem-8", 8, 52, None, 0),
    "complex_model_s": LegacyMachine("n1-highcpu-8", 8, 7.2, None, 0),
    "complex_model_m": LegacyMachine("n1-highcpu-16", 16, 14.4, None, 0),
    "complex_model_l": LegacyMachine("n1-highcpu-32", 32, 28.8, None, 0),
    "standard_gpu": LegacyMachine("n1-standard-8", 8, 30, "K80", 1),
    "complex_model_m_gpu": LegacyMachine("n1-standard-16", 16, 60, "K80", 4),
    "complex_model_l_gpu": LegacyMachine("n1-standard-32", 32, 120, "K80", 8),
    "standard_p100": LegacyMachine("n1-standard-8", 8, 30, "P100", 1),
    "complex_model_m_p100": LegacyMachine("n1-standard-16", 16, 60, "P100", 4),
    "standard_v100": LegacyMachine("n1-standard-8", 8, 30, "V100", 1),
    "large_model_v100": LegacyMachine("n1-highmem-8", 8, 52, "V100", 1),
    "complex_model_m_v100": LegacyMachine("n1-standard-16", 16, 60, "V100", 4),
    "complex_model_l_v100": LegacyMachine("n1-standard-32", 32, 120, "V100", 8),
    "standard_tpu": LegacyMachine("n1-standard-4", 4, 15, "TPU_V2", 1),
    "cloud_tpu": LegacyMachine("n1-standard-4", 4, 15, "TPU_V2", 1),
}


class Tier(NamedTuple):
    master: str
    workers: int
    parameter_servers: int


#: scaleTier → (master machine, workers, parameter servers); CUSTOM reads masterType.
SCALE_TIERS: dict[str, Tier | None] = {
    "BASIC": Tier("standard", 0, 0),
    "BASIC_GPU": Tier("standard_gpu", 0, 0),
    "BASIC_TPU": Tier("standard_tpu", 0, 0),
    "STANDARD_1": Tier("complex_model_s", 4, 3),
    "PREMIUM_1": Tier("complex_model_m", 19, 11),
    "CUSTOM": None,
}
_KNOWN_KEYS = {
    "scaleTier",
    "masterType",
    "masterConfig",
    "workerType",
    "workerCount",
    "workerConfig",
    "parameterServerCount",
    "parameterServerType",
    "parameterServerConfig",
    "region",
    "runtimeVersion",
    "pythonVersion",
    "jobDir",
    "args",
    "pythonModule",
    "packageUris",
    "scheduling",
    "serviceAccount",
    "network",
    "useChiefInTfConfig",
    "evaluatorCount",
    "evaluatorType",
    "evaluatorConfig",
    "hyperparameters",
    "encryptionConfig",
    "enableWebAccess",
}
#: Keys that cannot map, with the fix to name.
_REFUSED = {
    "packageUris": (
        "packageUris names packages built elsewhere; cloudtrain builds and stages the package itself",
        "remove packageUris and give the package folder (--package-path ./trainer, or package.path)",
    ),
    "evaluatorCount": ("evaluators are not supported: all replicas train", "remove evaluatorCount"),
    "encryptionConfig": ("customer-managed encryption keys are not supported", "remove encryptionConfig"),
    "enableWebAccess": ("interactive shell access is not supported", "remove enableWebAccess"),
}


def is_legacy(data: Any) -> bool:
    return isinstance(data, dict) and "trainingInput" in data


def camel(key: str) -> str:
    """``snake_case`` → ``camelCase`` (gcloud's and ML Engine's keys as the REST API spells them)."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def convert(loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]]:
    """Turn a legacy document into cloudtrain's dict and the notes on what was mapped.

    Line numbers (and flag origins) are re-pointed at the old keys."""
    doc = _Reading(loaded)
    tier, tier_name, master, accel = doc.tier()
    machine = _machine(str(master), accel, doc.cloud, doc.source, tier_name if tier else None, doc.notes)
    if machine:
        doc.put(("machine", "type"), machine.machine_type, doc.source)
        if machine.accelerator_count:
            doc.put(("machine", "accelerator"), machine.accelerator, doc.source)
            doc.put(("machine", "accelerator_count"), machine.accelerator_count, doc.source)
    doc.replicas(tier, master, accel)
    doc.image(tpus.is_tpu(machine.machine_type) if machine else False)
    doc.the_rest()
    return doc.out, doc.notes


class _Reading:
    """One ``trainingInput`` document being read, a section at a time, into cloudtrain's keys (``out``)."""

    def __init__(self, loaded: LoadedYaml) -> None:
        self.loaded, self.notes = loaded, list[str]()
        data = loaded.data
        self.ti_raw = data["trainingInput"]
        self.ti_line = loaded.line_of(("trainingInput",))
        self.originals: dict[str, str] = {}
        if not isinstance(self.ti_raw, dict):
            raise self.fail("must be a mapping", None, "see `cloudtrain schema` or job_configs/legacy-mlengine.yaml")
        self.originals.update({camel(k): k for k in self.ti_raw})
        self.ti = ti = {camel(k): v for k, v in self.ti_raw.items()}
        problems = [
            self.fail(
                f"unknown trainingInput key {self.originals[key]!r}", key, "remove it or check the ML Engine docs"
            )
            for key in ti
            if key not in _KNOWN_KEYS
        ]
        problems += [
            self.fail(message, key, hint)
            for key, (message, hint) in _REFUSED.items()
            if ti.get(key) not in (None, False, 0, [], {})
        ]
        if problems:  # every key that cannot be read, at once, in file order
            problems.sort(key=lambda e: e.line or 0)
            raise problems[0] if len(problems) == 1 else ConfigErrors(problems)
        self.out: dict[str, Any] = copy.deepcopy(
            {k: v for k, v in data.items() if k not in ("trainingInput", "trainingOutput", "jobId")}
        )
        self.out.setdefault("backend", "vertex")
        self.out.setdefault("name", name_from_file(loaded.file))
        out = self.out
        self.cloud = (out.get("target") or "vertex") if out["backend"] == "local" else out["backend"]
        self.source = "scaleTier"  # the key the machine came from

    def _orig(self, path: Path_) -> Path_:
        return tuple(self.originals.get(p, p) if isinstance(p, str) else p for p in path)

    def _from_file(self, path: Path_) -> bool:
        lines = self.loaded.lines
        return path in lines and lines[path] != 0 and not self.loaded.flag_of(path)

    def fail(self, message: str, key: str | None, hint: str) -> ConfigError:
        return self.loaded.error(self._orig(("trainingInput", *(k for k in [key] if k))), message, hint)

    def put(self, path: tuple[str, ...], value: Any, source_key: str) -> None:
        target = self.out
        for part in path[:-1]:
            target = target.setdefault(part, {})
        source = self._orig(("trainingInput", source_key))
        if path[-1] in target:  # a cloudtrain key next to trainingInput wins, unless the file says both
            given = target[path[-1]]
            if given != value and isinstance(given, type(value)) and self._from_file(path) and self._from_file(source):
                dotted = ".".join(path)
                raise self.loaded.error(
                    path,
                    f"the file says {dotted}: {given} here and {'.'.join(map(str, source))}: {value}",
                    f"keep one of them (or choose with --set {dotted}=…)",
                )
            return
        target[path[-1]] = value
        self.loaded.lines.setdefault(path, self.loaded.line_of(source) or self.ti_line or 1)
        if flag := self.loaded.flag_of(source):
            self.loaded.flags.setdefault(path, flag)

    def tier(self) -> tuple[Any, str, Any, tuple[str, int] | None]:
        """The scale tier (None: CUSTOM), its name, the master's machine type and its accelerator."""
        ti = self.ti
        # Without scaleTier ML Engine ran BASIC; a masterType alone can only mean CUSTOM.
        tier_name = str(ti.get("scaleTier", "CUSTOM" if "masterType" in ti else "BASIC")).upper().replace("-", "_")
        if tier_name not in SCALE_TIERS:
            raise self.fail(
                f"unknown scaleTier {ti.get('scaleTier')!r}", "scaleTier", f"use one of {', '.join(SCALE_TIERS)}"
            )
        tier = SCALE_TIERS[tier_name]
        if tier and "masterType" in ti:  # ML Engine refused this; the machine named is what the user means
            self.notes.append(
                mapped_line(
                    "trainingInput.scaleTier",
                    tier_name,
                    "CUSTOM",
                    f"masterType {ti['masterType']} "
                    "is given, and ML Engine read masterType only with scaleTier CUSTOM; "
                    "--scale-tier CUSTOM says so explicitly",
                )
            )
            tier_name, tier = "CUSTOM", None
        master = tier.master if tier else ti.get("masterType")
        self.source = "scaleTier" if tier else "masterType"
        if not master:
            raise self.fail(
                "scaleTier CUSTOM needs masterType", "scaleTier", "add masterType: n1-standard-8 (for example)"
            )
        accel = _accelerator_config(ti.get("masterConfig"), self.fail)
        if accel:
            self.source = "masterConfig"
        return tier, tier_name, master, accel

    def replicas(self, tier: Any, master: Any, accel: tuple[str, int] | None) -> None:
        """Workers on the master's machine; parameter servers become workers (a ``mapped:`` line)."""
        ti = self.ti
        workers = tier.workers if tier else int(ti.get("workerCount") or 0)
        if workers and not tier:
            same_type = ti.get("workerType", master) == master
            same_accel = _accelerator_config(ti.get("workerConfig"), self.fail) in (None, accel)
            if not same_type or not same_accel:
                raise self.fail(
                    "workers must use the same machine as the master (one machine spec for all replicas)",
                    "workerType" if not same_type else "workerConfig",
                    f"set workerType: {master} and the same acceleratorConfig",
                )
        servers = tier.parameter_servers if tier else int(ti.get("parameterServerCount") or 0)
        if servers:
            where = "scaleTier" if tier else "parameterServerCount"
            self.notes.append(
                mapped_line(
                    f"trainingInput.{where}",
                    counted(servers, "parameter server"),
                    f"{1 + workers + servers} replicas of the master's machine",
                    "parameter servers become workers: MultiWorkerMirroredStrategy all-reduces, "
                    "with no parameter servers",
                )
            )
        if workers or servers:
            self.put(("replica_count",), 1 + workers + servers, "workerCount" if "workerCount" in ti else "scaleTier")

    def image(self, tpu: bool) -> None:
        """The master's image URI, else the TensorFlow of ``runtimeVersion`` and the ``pythonVersion``."""
        ti = self.ti
        image = {camel(k): v for k, v in (ti.get("masterConfig") or {}).items()}.get("imageUri")
        worker_image = {camel(k): v for k, v in (ti.get("workerConfig") or {}).items()}.get("imageUri")
        if worker_image and worker_image != image:
            raise self.fail(
                "workers must run the master's image", "workerConfig", "use the same imageUri (or none) for both"
            )
        if image:
            self.put(("image", "uri"), image, "masterConfig")
        elif ti.get("runtimeVersion") is not None:
            version = _tensorflow(str(ti["runtimeVersion"]), self.cloud, self.notes, tpu=tpu)
            self.put(("image", "tensorflow"), version, "runtimeVersion")
        if ti.get("pythonVersion") is not None and not image:
            _python(str(ti["pythonVersion"]), self.out, self.cloud, self.notes)

    def the_rest(self) -> None:
        """Region, args, module, job dir, service account, network, the time limit and a sweep."""
        ti = self.ti
        simple = {
            "region": ("region",),
            "args": ("args",),
            "pythonModule": ("package", "module"),
            "jobDir": ("job_dir",),
            "serviceAccount": ("service_account",),
            "network": ("network",),
        }
        for key, path in simple.items():
            if key in ti:
                self.put(path, ti[key], key)
        timeout = (ti.get("scheduling") or {}).get("maxRunningTime")
        if timeout:
            self.put(("max_runtime",), timeout, "scheduling")
        if "hyperparameters" in ti:
            sweep = convert_hyperparameters(self.ti_raw[self.originals["hyperparameters"]], self.fail)
            self.put(("sweep",), sweep, "hyperparameters")


def _accelerator_config(config: Any, fail: Callable[[str, str | None, str], ConfigError]) -> tuple[str, int] | None:
    config = {camel(k): v for k, v in config.items()} if isinstance(config, dict) else {}
    accel = config.get("acceleratorConfig")
    if not accel:
        return None
    if not isinstance(accel, dict) or not accel.get("type"):
        raise fail(
            "acceleratorConfig needs a type",
            "masterConfig",
            "e.g. acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 4}",
        )
    return str(accel["type"]).upper().replace("-", "_"), int(accel.get("count") or 1)


def _machine(
    name: str, accel: tuple[str, int] | None, cloud: str, source: str, tier: str | None, notes: list[str]
) -> MachineInfo | _Fixed:
    """The machine for ``cloud``: as ML Engine had it where the cloud offers that, else the nearest. A legacy
    name (``standard_p100``) is a mapping even so (now ``n1-standard-8`` + 1 × P100), and a line says so."""
    legacy = LEGACY_MACHINES.get(name)
    gpu, count = (legacy.gpu, legacy.gpu_count) if legacy else (None, 0)
    machine_type = legacy.machine_type if legacy else name
    if accel:
        gpu, count = crosscloud.gpu_model(accel[0]), accel[1]
        if gpu is None:  # not a GPU cloudtrain knows: the catalog names the valid ones
            return _Fixed(machine_type, accel[0], count)
    shape = machine_type + (f" with {count} × {gpu}" if gpu else "")
    was = f"{name} ({shape})" if legacy and source != "masterConfig" else shape
    if tier:
        was = f"{tier}: {was}"
    key = f"trainingInput.{source}"
    if cloud == "vertex" and gpu == _ML_ENGINE_TPU:
        info = catalog.resolve_machine("vertex", "cloud-tpu", _ML_ENGINE_TPU, 8)
        notes.append(
            mapped_line(
                key,
                was,
                tpus.describe(info),
                "ML Engine attached a Cloud TPU v2 device (8 cores) to a VM; Vertex AI runs it as one TPU VM",
                (None, info.price_per_hour),
            )
        )
        return info
    if cloud == "vertex" and not (gpu and crosscloud.is_retired(gpu)):
        try:
            info = catalog.resolve_machine("vertex", machine_type, _vertex_accelerator(gpu) if gpu else None, count)
        except catalog.CatalogError:
            if legacy is None:  # a Compute Engine name as typed: the catalog explains what is wrong
                return _Fixed(name, accel[0] if accel else None, count)
        else:
            if legacy and source != "masterConfig":
                notes.append(
                    mapped_line(
                        key,
                        was,
                        crosscloud.describe(info),
                        "ML Engine's name for this machine; Vertex AI names it by machine type and GPUs",
                        (None, info.price_per_hour),
                    )
                )
            return info
    if legacy:
        vcpus, memory_gb = legacy.vcpus, legacy.memory_gb
    else:
        known = table("vertex").types.get(name)
        if known is None:
            return _Fixed(name, accel[0] if accel else None, count)
        vcpus, memory_gb = known.vcpus, known.memory_gb
    found = crosscloud.nearest_machine(cloud, gpu, count, vcpus, memory_gb)
    found_gpu = found.gpu.name if found.gpu else "no GPU"
    why = []
    if gpu == _ML_ENGINE_TPU:
        why.append(f"{_LABEL[cloud]} has no TPUs and {found_gpu} is the cheapest GPU at least as fast")
    elif gpu and crosscloud.is_retired(gpu):
        why.append(f"{gpu} is retired and {found_gpu} is the cheapest GPU at least as fast on {_LABEL[cloud]}")
    elif gpu and found.gpu and found.gpu.name != gpu:
        why.append(f"{_LABEL[cloud]} has no {gpu} and {found.gpu.name} is the cheapest GPU at least as fast")
    if gpu and found.accelerator_count != count:
        why.append(f"{count} × {found_gpu} is not offered, {found.accelerator_count} is the nearest count")
    if not gpu and cloud == "vertex":
        why.append(f"{machine_type} is not a Vertex AI training machine type")
    if not why:
        why.append(f"{_LABEL[cloud]}'s cheapest machine with these GPUs and at least the vCPUs and memory")
    notes.append(mapped_line(key, was, crosscloud.describe(found), "; ".join(why), (None, found.price_per_hour)))
    return found


class _Fixed(NamedTuple):
    """A machine passed on as written, for the catalog to check (and name alternatives)."""

    machine_type: str
    accelerator: str | None
    accelerator_count: int


def _vertex_accelerator(gpu: str) -> str:
    names = table("vertex").accelerators_named(gpu)
    return names[0] if names else gpu


def _tensorflow(runtime: str, cloud: str, notes: list[str], *, tpu: bool = False) -> str:
    """The image version for ``runtimeVersion``; on a TPU VM, among the TPU images."""
    offered = tpus.tensorflow_versions() if tpu else catalog.tensorflow_versions(cloud)
    label = _LABEL[cloud] + (" TPU" if tpu else "")
    version, why = crosscloud.mapped_tensorflow(runtime, offered, label)
    if why:
        notes.append(mapped_line("trainingInput.runtimeVersion", runtime, version, why))
    return version


def _python(wanted: str, out: dict[str, Any], cloud: str, notes: list[str]) -> None:
    tensorflow = (out.get("image") or {}).get("tensorflow") or catalog.default_tensorflow(cloud)
    have = catalog.image_pythons(cloud, str(tensorflow))
    if wanted in have:
        if len(have) > 1:  # honoured: the image comes with that Python too
            out.setdefault("image", {}).setdefault("python", wanted)
    elif have:
        notes.append(
            mapped_line(
                "trainingInput.pythonVersion",
                wanted,
                ", ".join(have),
                f"the TensorFlow {tensorflow} image has Python {', '.join(have)}; your code runs on that",
            )
        )


def name_from_file(file: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", PurePath(file).stem).strip("-")
    return (stem if stem[:1].isalpha() else f"job-{stem}")[:128].rstrip("-") or "job"
