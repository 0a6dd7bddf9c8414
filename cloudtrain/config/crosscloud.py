"""Move a config to the other cloud: what that cloud lacks is mapped to its nearest, in one line each.

:func:`fit_to_cloud` is the one place this happens. ``cloudtrain submit`` (and the gcloud forms)
call it after ``--set`` so ``--set backend=sagemaker`` runs a Vertex or ML Engine file on
SageMaker; a fallback entry that switches backend calls it the same way.

Mapped, each with a line: the machine (by GPU model and count, :mod:`cloudtrain.catalog.crosscloud`),
the region (a table kept as data), the TensorFlow version (the nearest the cloud offers, the
newer on a tie), a prebuilt TF image URI of the other cloud (to its TF version). Refused, with
the fix named: buckets of the other cloud (staging, output, job dir) and any other image of the
other cloud's registry. Data channels in the other cloud's bucket are refused by the config
checks (``data:``), after this: data is never copied between clouds behind the user's back.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from cloudtrain import catalog
from cloudtrain.catalog import crosscloud
from cloudtrain.mapping import mapped_line
from cloudtrain.numbers import money

_LABEL = {"vertex": "Vertex AI", "sagemaker": "SageMaker"}
_SCHEME = {"vertex": "gs://", "sagemaker": "s3://"}
_REGISTRY = {"vertex": re.compile(r"(^|\.)(gcr\.io|pkg\.dev)/"), "sagemaker": re.compile(r"\.dkr\.ecr\.")}
_VERTEX_TF_IMAGE = re.compile(r"/vertex-ai/training/tf-(?:cpu|gpu)\.(\d+)-(\d+)\.py\d+(?::|$)")
_SAGEMAKER_TF_IMAGE = re.compile(r"/tensorflow-training:(\d+)\.(\d+)(?:\.\d+)?-")


class Refused(Exception):
    """A setting that cannot move to the other cloud: ``path`` in the config, the message, the fix."""

    def __init__(self, path: tuple[str, ...], message: str, hint: str):
        super().__init__(message)
        self.path, self.message, self.hint = path, message, hint


def other(cloud: str) -> str:
    return "sagemaker" if cloud == "vertex" else "vertex"


def fit_to_cloud(data: dict[str, Any], cloud: str, *, translate: bool = True) -> tuple[dict[str, Any], list[str]]:
    """``data`` (a config dict, before validation) made to run on ``cloud``, and one ``mapped:`` line per mapping.

    Settings that already belong to ``cloud`` are left alone, so a native config comes back
    unchanged with no lines. Raises :class:`Refused` for what cannot be mapped. ``translate``
    False (nothing asked for a translation) leaves the machine alone: the other cloud's machine
    type typed into a config is a mistake, which the loader refuses with :func:`foreign_machine`.
    """
    if cloud not in _LABEL:
        return data, []
    out = copy.deepcopy(data)
    notes: list[str] = []
    source = other(cloud)
    if translate:
        _machine(out, cloud, source, notes)
    _region(out, cloud, source, notes)
    _image(out, cloud, source, notes)
    _buckets(out, cloud, source)
    return out, notes


def _machine(out: dict[str, Any], cloud: str, source: str, notes: list[str]) -> None:
    info = _foreign(out, cloud, source)
    if info is None:
        return
    machine = out["machine"]
    gpu = info.gpu.name if info.gpu else None
    found = crosscloud.nearest_machine(cloud, gpu, info.accelerator_count, info.vcpus, info.memory_gb)
    why = []
    if gpu and found.gpu and found.gpu.name != gpu:
        why.append(f"{_LABEL[cloud]} has no {gpu}; {found.gpu.name} is the cheapest GPU at least as fast")
    if gpu and found.accelerator_count != info.accelerator_count:
        why.append(f"{found.accelerator_count} is the nearest GPU count it offers")
    if not why:
        why.append(f"{_LABEL[cloud]}'s cheapest machine with these " + ("GPUs" if gpu else "CPUs") +
                   " and at least the vCPUs and memory")  # fmt: skip
    notes.append(mapped_line("machine", f"{crosscloud.describe(info)} ({_LABEL[source]})", crosscloud.describe(found),
                             "; ".join(why), (info.price_per_hour, found.price_per_hour)))  # fmt: skip
    new: dict[str, Any] = {"type": found.machine_type}
    if found.accelerator_count and cloud == "vertex":
        new.update(accelerator=found.accelerator, accelerator_count=found.accelerator_count)
    new.update({k: v for k, v in machine.items() if k not in ("type", "accelerator", "accelerator_count")})
    out["machine"] = new


def _foreign(out: dict[str, Any], cloud: str, source: str):
    """The machine of ``out`` when it is one of ``source``'s (and not ``cloud``'s), resolved there; else None."""
    machine = out.get("machine")
    if not isinstance(machine, dict) or not isinstance(machine.get("type"), str):
        return None
    if machine["type"] in _types(cloud) or machine["type"] not in _types(source):
        return None
    try:
        return catalog.resolve_machine(source, machine["type"], machine.get("accelerator"),
                                       machine.get("accelerator_count"))  # fmt: skip
    except catalog.CatalogError:
        return None  # invalid on its own cloud too: validation names the problem


def foreign_machine(data: dict[str, Any], cloud: str) -> Refused | None:
    """The refusal of a machine type of the other cloud in a config for ``cloud``, naming the nearest of
    ``cloud``'s and the ``--set backend=…`` that runs it where it belongs; None when the type is not one."""
    source = other(cloud)
    info = _foreign(data, cloud, source)
    if info is None:
        return None
    gpu = info.gpu.name if info.gpu else None
    found = crosscloud.nearest_machine(cloud, gpu, info.accelerator_count, info.vcpus, info.memory_gb)
    kind = "instance type" if source == "sagemaker" else "machine type"
    price = f" ({money(found.price_per_hour)}/h)" if found.price_per_hour is not None else ""
    needs = {"sagemaker": "role_arn and an s3:// staging_bucket", "vertex": "project and a gs:// staging_bucket"}
    return Refused(("machine", "type"), f"{info.machine_type} is a {_LABEL[source]} {kind} and this config runs on "
                   f"{_LABEL[cloud]}", f"nearest on {_LABEL[cloud]}: {crosscloud.describe(found)}{price}; or run it "
                   f"on {_LABEL[source]}: --set backend={source} (with {needs[source]})")  # fmt: skip


def _types(cloud: str):
    from cloudtrain.catalog.table import table

    return table(cloud).types


def _region(out: dict[str, Any], cloud: str, source: str, notes: list[str]) -> None:
    region = out.get("region")
    if not isinstance(region, str) or region in catalog.regions(cloud) or region not in catalog.regions(source):
        return
    nearest = crosscloud.nearest_region(cloud, region)
    if nearest:
        out["region"] = nearest
        notes.append(mapped_line("region", region, nearest, f"the nearest {_LABEL[cloud]} region"))


def _image(out: dict[str, Any], cloud: str, source: str, notes: list[str]) -> None:
    image = out.get("image")
    if not isinstance(image, dict):
        return
    uri = image.get("uri")
    if isinstance(uri, str) and _REGISTRY[source].search(uri):
        match = (_VERTEX_TF_IMAGE if source == "vertex" else _SAGEMAKER_TF_IMAGE).search(uri)
        if not match:
            raise Refused(("image", "uri"), f"{uri} is in {_LABEL[source]}'s registry, which {_LABEL[cloud]} "
                          "does not pull from", f"push it to the {_LABEL[cloud]} registry, or remove image.uri "
                          "and set image.tensorflow")  # fmt: skip
        image = {k: v for k, v in image.items() if k != "uri"}
        image["tensorflow"] = f"{match[1]}.{match[2]}"
        out["image"] = image
        notes.append(mapped_line("image.uri", uri, f"{_LABEL[cloud]}'s TensorFlow {image['tensorflow']} image",
                                 f"it is {_LABEL[source]}'s TensorFlow {image['tensorflow']} image"))
    version = image.get("tensorflow")
    if not isinstance(version, str) or image.get("uri"):
        return
    offered = catalog.tensorflow_versions(cloud)
    wanted = ".".join(version.strip().split(".")[:2])
    if wanted in offered or wanted not in catalog.tensorflow_versions(source):
        return
    nearest = crosscloud.nearest_tensorflow(wanted, offered)
    out["image"] = {**image, "tensorflow": nearest}
    notes.append(mapped_line("image.tensorflow", wanted, nearest, f"{_LABEL[cloud]} has no TensorFlow {wanted} "
                             "image; the nearest it offers, the newer on a tie"))


def _buckets(out: dict[str, Any], cloud: str, source: str) -> None:
    theirs = _SCHEME[source]
    for key in ("staging_bucket", "output_dir", "job_dir"):
        value = out.get(key)
        if isinstance(value, str) and value.startswith(theirs):
            raise Refused((key,), f"{value} is a {_LABEL[source]} bucket; {_LABEL[cloud]} cannot use it",
                          f"set {key}: {_SCHEME[cloud]}… (--set {key}={_SCHEME[cloud]}my-bucket)")  # fmt: skip
