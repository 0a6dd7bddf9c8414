"""Read a Vertex ``CustomJobSpec`` (what ``gcloud ai custom-jobs create --config`` takes) as a config.

A whole ``CustomJob`` (as ``--dry-run -o json`` prints it) is read too; keys may be camelCase or snake_case, and
cloudtrain keys beside them win. Pool 0 is the chief, pool 1 the workers (one machine spec for all replicas), pool
2 parameter servers (they become workers, with a note), pool 3 evaluators (refused); a ``containerSpec`` is read as
``container:``. What cloudtrain cannot run is refused in one line each: ``packageUris`` without a package folder,
web access, restarts."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from cloudtrain.backends.vertex.mlengine import camel, name_from_file
from cloudtrain.config.yaml12 import LoadedYaml, Path_
from cloudtrain.errors import ConfigError
from cloudtrain.text import counted, mapped_line

BOOT_DISK_TYPE = "pd-ssd"
_SPEC_KEYS = {
    "workerPoolSpecs",
    "scheduling",
    "serviceAccount",
    "network",
    "baseOutputDirectory",
    "enableWebAccess",
    "reservedIpRanges",
    "tensorboard",
    "enableDashboardAccess",
    "experiment",
    "experimentRun",
    "models",
    "persistentResourceId",
    "protectedArtifactLocationId",
}
_JOB_KEYS = {"displayName", "jobSpec", "labels", "encryptionSpec"}
_POOL_KEYS = {"machineSpec", "replicaCount", "diskSpec", "pythonPackageSpec", "containerSpec", "nfsMounts"}
_UNSUPPORTED = {
    "enableWebAccess": "interactive shell access is not supported",
    "enableDashboardAccess": "dashboard access is not supported",
    "reservedIpRanges": "reserved IP ranges are not supported",
    "tensorboard": (
        "a managed TensorBoard instance is not supported (the trainer writes TensorBoard logs to the output dir)"
    ),
    "experiment": "Vertex experiments are not supported",
    "experimentRun": "Vertex experiments are not supported",
    "models": "model registry uploads are not supported",
    "persistentResourceId": "persistent resources are not supported",
    "protectedArtifactLocationId": "protected artifact locations are not supported",
    "encryptionSpec": "customer-managed encryption keys are not supported",
    "nfsMounts": "NFS mounts are not supported",
}


def is_custom_job(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    keys = {camel(k) for k in data}
    return "workerPoolSpecs" in keys or (
        "jobSpec" in keys and isinstance(data.get("jobSpec", data.get("job_spec")), dict)
    )


def convert(loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]]:
    """The cloudtrain dict for a CustomJobSpec document, and the notes on what was mapped."""
    doc = _Converting(loaded)
    pools_key = doc.keys.get("workerPoolSpecs", "workerPoolSpecs")
    chief = doc.pools(pools_key)
    doc.code(chief.get("code") or {}, doc.at(pools_key, 0))
    doc.scheduling()
    return doc.out, doc.notes


class _Converting:
    """One CustomJobSpec document being read, a section at a time, into cloudtrain's keys (``out``)."""

    def __init__(self, loaded: LoadedYaml) -> None:
        self.loaded, self.notes, self.out = loaded, list[str](), dict[str, Any]()
        data = loaded.data
        top = {camel(k): k for k in data}
        self.prefix: Path_ = ()
        self.spec = data
        if "jobSpec" in top:
            self.prefix = (top["jobSpec"],)
            self.spec = data[top["jobSpec"]]
            if "displayName" in top:
                self.out["name"] = data[top["displayName"]]
                self.out["name_suffix"] = False
            if "labels" in top and isinstance(data[top["labels"]], dict):
                self.out["labels"] = {k: v for k, v in data[top["labels"]].items() if k != "cloudtrain-submit-id"}
            for key in top:
                if key in _UNSUPPORTED:
                    raise loaded.error((top[key],), _UNSUPPORTED[key], f"remove {top[key]}")
            self.out.update(copy.deepcopy({k: v for k, v in data.items() if camel(k) not in _JOB_KEYS}))
        else:
            self.out.update(copy.deepcopy({k: v for k, v in data.items() if camel(k) not in _SPEC_KEYS}))
        self.keys = {camel(k): k for k in self.spec}
        for key, original in self.keys.items():
            if key in _UNSUPPORTED and self.spec[original] not in (None, False, [], {}, ""):
                raise self.fail(self.at(original), _UNSUPPORTED[key], f"remove {original}")
        self.out.setdefault("backend", "vertex")
        if "name" not in self.out:
            self.out["name"] = name_from_file(loaded.file)

    def at(self, *path: str | int) -> Path_:
        return (*self.prefix, *path)

    def fail(self, path: Path_, message: str, hint: str) -> ConfigError:
        return self.loaded.error(path, message, hint)

    def put(self, path: tuple[str, ...], value: Any, source: Path_) -> None:
        target = self.out
        for part in path[:-1]:
            target = target.setdefault(part, {})
        if path[-1] in target:
            return  # a cloudtrain key next to the spec wins
        target[path[-1]] = value
        self.loaded.lines.setdefault(path, self.loaded.line_of(source) or 1)
        if flag := self.loaded.flag_of(source):
            self.loaded.flags.setdefault(path, flag)

    def pools(self, pools_key: str) -> dict[str, Any]:
        """The worker pools: the chief's machine and disk, then how many replicas; the chief's pool."""
        pools = self.spec.get(pools_key)
        if not isinstance(pools, list) or not pools or not isinstance(pools[0], dict) or not pools[0]:
            raise self.fail(
                self.at(pools_key),
                "needs at least the first worker pool (the chief)",
                "e.g. workerPoolSpecs: [{machineSpec: {machineType: n1-standard-4}, replicaCount: 1, "
                "pythonPackageSpec: {…}}]",
            )
        chief = _pool(pools[0], self.at(pools_key, 0), self.loaded, self.fail)
        rest = (_pool(p, self.at(pools_key, i), self.loaded, self.fail) if isinstance(p, dict) and p else None
                for i, p in enumerate(pools) if i)  # fmt: skip
        parsed = [chief, *rest]
        if int(chief["replicaCount"]) != 1:
            raise self.fail(
                self.at(pools_key, 0),
                f"the first pool is the chief and has 1 replica, not {chief['replicaCount']}",
                "set replicaCount: 1 and put the other replicas in the second pool",
            )
        machine, source = chief["machineSpec"], self.at(pools_key, 0)
        self.put(("machine", "type"), machine.get("machineType"), source)
        if machine.get("acceleratorType") and machine.get("acceleratorType") != "ACCELERATOR_TYPE_UNSPECIFIED":
            self.put(("machine", "accelerator"), machine["acceleratorType"], source)
            self.put(("machine", "accelerator_count"), int(machine.get("acceleratorCount") or 1), source)
        disk = chief.get("diskSpec") or {}
        if disk.get("bootDiskSizeGb"):
            self.put(("machine", "disk_gb"), int(disk["bootDiskSizeGb"]), source)
        if disk.get("bootDiskType") not in (None, BOOT_DISK_TYPE):
            self.notes.append(
                mapped_line(
                    f"{pools_key}[0].diskSpec.bootDiskType",
                    disk["bootDiskType"],
                    BOOT_DISK_TYPE,
                    "the one boot disk type cloudtrain requests",
                )
            )
        self.replicas(pools_key, parsed)
        return chief

    def replicas(self, pools_key: str, parsed: list[dict[str, Any] | None]) -> None:
        """Pool 1 the workers (the chief's machine and code), pool 2 parameter servers, no evaluators."""
        chief = parsed[0] or {}
        replicas = 1
        if len(parsed) > 1 and (workers := parsed[1]):
            if workers["machineSpec"] != chief["machineSpec"] or workers.get("code") != chief.get("code"):
                raise self.fail(
                    self.at(pools_key, 1),
                    "workers must use the chief's machine and code (one spec for all replicas)",
                    "give the second pool the first pool's machineSpec and pythonPackageSpec (or containerSpec)",
                )
            replicas += int(workers["replicaCount"])
        if len(parsed) > 2 and (parameter_servers := parsed[2]):
            servers = int(parameter_servers["replicaCount"])
            replicas += servers
            self.notes.append(
                mapped_line(
                    f"{pools_key}[2]",
                    counted(servers, "parameter server"),
                    f"{replicas} replicas of the chief's machine",
                    "parameter servers become workers: MultiWorkerMirroredStrategy all-reduces, "
                    "with no parameter servers",
                )
            )
        if len(parsed) > 3 and parsed[3]:
            raise self.fail(
                self.at(pools_key, 3), "evaluator pools are not supported: all replicas train", "remove the fourth pool"
            )
        if len(parsed) > 4:
            raise self.fail(self.at(pools_key, 4), "Vertex has at most 4 worker pools", "remove the extra pools")
        if replicas > 1:
            self.put(("replica_count",), replicas, self.at(pools_key))

    def code(self, code: dict[str, Any], pool: Path_) -> None:
        """The chief's pythonPackageSpec or containerSpec: image, module, args, env; no prebuilt packages."""
        source = (*pool, code.get("_key", "pythonPackageSpec"))
        if code.get("_kind") == "containerSpec":
            if not code.get("imageUri"):
                raise self.fail(
                    source,
                    "containerSpec.imageUri is required",
                    "e.g. imageUri: us-docker.pkg.dev/PROJECT/REPO/IMAGE:TAG",
                )
            self.put(("container", "image_uri"), code["imageUri"], source)
            if code.get("command"):
                self.put(("container", "command"), [str(c) for c in code["command"]], source)
        if code.get("executorImageUri"):
            self.put(("image", "uri"), code["executorImageUri"], source)
        if code.get("pythonModule"):
            self.put(("package", "module"), code["pythonModule"], source)
        if code.get("args"):
            self.put(("args",), [str(a) for a in code["args"]], source)
        if code.get("env"):
            env = {e["name"]: str(e.get("value", "")) for e in code["env"] if isinstance(e, dict)}
            self.put(("env",), env, source)
        uris = code.get("packageUris") or []
        if uris:
            if not (self.out.get("package") or {}).get("path"):
                raise self.fail(
                    source,
                    f"packageUris {uris[0]} names a package built elsewhere; cloudtrain builds and "
                    "stages the package from its source folder",
                    "give the folder: --set package.path=./trainer "
                    "(or local-package-path= in --worker-pool-spec) and drop packageUris",
                )
            self.notes.append(
                mapped_line(
                    "packageUris",
                    ", ".join(uris),
                    f"the package built from package.path {self.out['package']['path']}",
                    "cloudtrain builds and stages the package itself",
                )
            )

    def scheduling(self) -> None:
        """``scheduling`` (timeout, spot), the service account, the network and the output folder."""
        keys, spec = self.keys, self.spec
        scheduling = {camel(k): v for k, v in (spec.get(keys.get("scheduling", "scheduling")) or {}).items()}
        source = self.at(keys.get("scheduling", "scheduling"))
        if scheduling.get("timeout"):
            self.put(("max_runtime",), _duration(scheduling["timeout"]), source)
        if scheduling.get("restartJobOnWorkerRestart"):
            raise self.fail(
                source,
                "restartJobOnWorkerRestart is not supported: a failed replica fails the job",
                "remove it; the trainer resumes from its checkpoints on resubmit",
            )
        strategy = scheduling.get("strategy")
        if strategy == "SPOT":
            self.put(("spot", "enabled"), True, source)
        elif strategy not in (None, "STRATEGY_UNSPECIFIED", "STANDARD", "ON_DEMAND"):
            raise self.fail(source, f"scheduling.strategy {strategy} is not supported", "use SPOT or remove strategy")
        for key, path in (("serviceAccount", ("service_account",)), ("network", ("network",))):
            if spec.get(keys.get(key, key)):
                self.put(path, spec[keys[key]], self.at(keys[key]))
        base = spec.get(keys.get("baseOutputDirectory", "baseOutputDirectory"))
        if isinstance(base, dict) and (base.get("outputUriPrefix") or base.get("output_uri_prefix")):
            prefix = base.get("outputUriPrefix") or base.get("output_uri_prefix")
            self.put(("output_dir",), prefix, self.at(keys["baseOutputDirectory"]))


def _pool(
    pool: dict[str, Any], path: Path_, loaded: LoadedYaml, fail: Callable[[Path_, str, str], ConfigError]
) -> dict[str, Any]:
    keys = {camel(k): k for k in pool}
    for key, original in keys.items():
        if key not in _POOL_KEYS:
            raise fail(
                (*path, original), f"unknown worker pool key {original!r}", f"allowed: {', '.join(sorted(_POOL_KEYS))}"
            )
    if "nfsMounts" in keys:
        raise fail((*path, keys["nfsMounts"]), _UNSUPPORTED["nfsMounts"], "remove nfsMounts")
    if "containerSpec" in keys and "pythonPackageSpec" in keys:
        raise fail(
            (*path, keys["containerSpec"]),
            "a worker pool runs a containerSpec or a pythonPackageSpec, not both",
            "keep one",
        )
    machine = {camel(k): v for k, v in (pool.get(keys.get("machineSpec", "")) or {}).items()}
    if not machine.get("machineType"):
        raise fail(
            (*path, keys.get("machineSpec", "machineSpec")),
            "machineSpec.machineType is required",
            "e.g. machineSpec: {machineType: n1-standard-16, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 4}",
        )
    if "acceleratorCount" in machine:
        machine["acceleratorCount"] = int(machine["acceleratorCount"])
    code = None
    for kind in ("pythonPackageSpec", "containerSpec"):
        if kind in keys:
            code = {camel(k): v for k, v in (pool[keys[kind]] or {}).items()}
            code["_key"] = keys[kind]
            code["_kind"] = kind
    disk = {camel(k): v for k, v in (pool.get(keys.get("diskSpec", "")) or {}).items()}
    return {
        "machineSpec": machine,
        "replicaCount": int(pool.get(keys.get("replicaCount", ""), 1) or 1),
        "diskSpec": disk,
        "code": code,
    }


def _duration(value: Any) -> Any:
    """``"7200s"`` (proto JSON Duration) → 7200; ``"1.5s"`` rounds up; anything else for the schema."""
    if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?s", value.strip()):
        return max(1, int(-(-float(value.strip()[:-1]) // 1)))
    return value  # the schema reads 2h, 90m, … and names the problem otherwise
