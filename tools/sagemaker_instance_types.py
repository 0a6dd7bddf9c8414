"""Add to cloudtrain/catalog/data/sagemaker.json every training instance type SageMaker accepts that the
catalog lacks: botocore's SageMaker service model (its ``TrainingInstanceType`` enum) is what
CreateTrainingJob accepts, so a type in it is never refused offline.

    python tools/sagemaker_instance_types.py            # add what is missing
    python tools/sagemaker_instance_types.py --check    # exit 1 when a type is missing

A type added here gets its vCPUs from EC2's size names (``large`` 2, ``xlarge`` 4, ``Nxlarge`` 4N;
``t3.medium`` 2), its memory from its family's GiB per vCPU (:data:`GIB_PER_VCPU`, from
aws.amazon.com/ec2/instance-types), its GPUs from sagemaker-core's ``instance_gpu_info.json`` where
the GPU model is one the catalog knows (:data:`GPU_FAMILIES`), and no price (the cost line says it is
unknown). A GPU type whose GPU model the catalog does not know yet is listed in ``_without_gpu_facts``
with why, and stays refused: run on it after its GPU is added to gpus.json.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "cloudtrain" / "catalog" / "data" / "sagemaker.json"

#: GiB of memory per vCPU by family (EC2's instance-type pages); the family's letter when not listed.
GIB_PER_VCPU = {"c": 2.0, "m": 4.0, "r": 8.0, "t": 4.0, "ml.c4": 1.875, "ml.c5n": 2.625, "ml.trn1": 4.0}
GIB_PER_VCPU |= {"ml.trn1n": 4.0, "ml.trn2": 2048 / 192, "ml.p5": 16.0, "ml.p5e": 2048 / 192}
GIB_PER_VCPU["ml.p5en"] = 2048 / 192
#: Families whose instances carry a GPU the catalog knows: family → the catalog's accelerator name (H200: EC2's
#: P5 page, :data:`DOCUMENTED`). ml.p2's K80 stays out: gpus.json keeps it as a retired GPU that maps to another.
GPU_FAMILIES = {"ml.p5": "H100", "ml.p5e": "H200", "ml.p5en": "H200", "ml.p6-b200": "B200", "ml.p6-b300": "B300"}
GPU_FAMILIES |= {"ml.p6e-gb200": "GB200", "ml.g7e": "RTX-PRO-6000"}  # Blackwell: :data:`BLACKWELL_SOURCE`
#: Where EC2's pages say otherwise than the rules above: (vCPUs, GiB, GPUs).
EXCEPTIONS = {"ml.c4.8xlarge": (36, 60.0, 0), "ml.p5.4xlarge": (16, 256.0, 1)}
#: GPU types sagemaker-core's instance_gpu_info.json does not list, from the page named, read on the day given.
DOCUMENTED = {
    "ml.p5e.48xlarge": (192, 2048.0, 8),  # 8 x H200 141 GB
    "ml.p5en.48xlarge": (192, 2048.0, 8),
    # Blackwell, from BLACKWELL_SOURCE: 8 x B200, 4 x GB200 (the Grace CPU's 144 vCPUs), 8 x B300
    "ml.p6-b200.48xlarge": (192, 2048.0, 8),
    "ml.p6e-gb200.36xlarge": (144, 960.0, 4),
    "ml.p6-b300.48xlarge": (192, 4096.0, 8),
    # RTX PRO 6000 Blackwell Server Edition, 1 to 8 per instance
    "ml.g7e.2xlarge": (8, 64.0, 1),
    "ml.g7e.4xlarge": (16, 128.0, 1),
    "ml.g7e.8xlarge": (32, 256.0, 1),
    "ml.g7e.12xlarge": (48, 512.0, 2),
    "ml.g7e.24xlarge": (96, 1024.0, 4),
    "ml.g7e.48xlarge": (192, 2048.0, 8),
}
BLACKWELL_SOURCE = (
    "AWS's own aws/sagemaker-hyperpod-cli, src/sagemaker/hyperpod/training/constants.py at 011ca92 (2026-06-22): "
    "INSTANCE_RESOURCES (vCPUs, GPUs, GiB) of ml.p6-b200, ml.p6e-gb200, ml.p6-b300 and ml.g7e"
)
#: Kepler (ML Engine's K80): the one line a p2 type is refused with, and the machine that stands in for it.
KEPLER = (
    "its {count} x K80 are Kepler GPUs (compute capability 3.7): SageMaker's TensorFlow images from 2.16 on are "
    "built with CUDA 12, which does not run on Kepler, and the catalog keeps no Kepler GPU; use {instead}, the "
    "machine ML Engine's K80 maps to"
)
#: EC2's P2 page: (vCPUs, GiB, K80s) of each p2 size, to find the machine that stands in for it.
P2 = {"ml.p2.xlarge": (4, 61, 1), "ml.p2.8xlarge": (32, 488, 8), "ml.p2.16xlarge": (64, 732, 16)}
DOCUMENTED_SOURCE = (
    "aws.amazon.com/ec2/instance-types/p5/ (P5e, P5en: 8 x H200 141 GB, 192 vCPUs, 2 TiB), read 2026-12-02"
)
#: Accelerators that are not GPUs: the type is a CPU type as far as TensorFlow can tell.
NO_GPU = ("ml.trn",)


def enum() -> list[str]:
    spec = importlib.util.find_spec("botocore")
    assert spec and spec.origin
    model = Path(spec.origin).parent / "data" / "sagemaker"
    path = sorted(model.glob("*/service-2.json*"))[-1]
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    types: list[str] = json.loads(raw)["shapes"]["TrainingInstanceType"]["enum"]
    return types


def gpu_memory_mib() -> dict[str, tuple[int, int]]:
    """sagemaker-core's instance_gpu_info.json: type → (GPUs, total GPU memory in MiB)."""
    spec = importlib.util.find_spec("sagemaker")
    assert spec and spec.submodule_search_locations
    path = Path(list(spec.submodule_search_locations)[0]) / "core" / "image_uri_config" / "instance_gpu_info.json"
    table: dict[str, tuple[int, int]] = {}
    for region in json.loads(path.read_text()).values():
        table.update({name: (info["Count"], info["TotalGpuMemoryInMiB"]) for name, info in region.items()})
    return table


def gpu_counts() -> dict[str, int]:
    return {name: count for name, (count, _) in gpu_memory_mib().items()}


def vcpus(size: str, family: str) -> int | None:
    if size == "medium" or (size == "large" and family.startswith("ml.t")):
        return 2
    if size == "large":
        return 2
    match = re.fullmatch(r"(\d*)xlarge", size)
    return 4 * int(match.group(1) or 1) if match else None


def additions(data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    have = {t for series in data["series"].values() for t in series["types"]}
    counts = gpu_counts()
    added: dict[str, dict[str, Any]] = {}
    refused: dict[str, str] = {}
    for name in enum():
        if name in have:
            continue
        family, size = name.rsplit(".", 1)
        count = counts.get(name, 0)
        gpu_family = re.match(r"ml\.[pg]\d", family) and not family.startswith(NO_GPU)
        if gpu_family and family not in GPU_FAMILIES:
            refused[name] = (
                kepler(name)
                if family == "ml.p2"
                else "a GPU type that sagemaker-core's GPU table does not list and no documented source was read for"
            )
            continue
        cpus = vcpus(size, family)
        letter = family.removeprefix("ml.")[0]
        ratio = GIB_PER_VCPU.get(family, GIB_PER_VCPU.get(letter))
        if (cpus is None or ratio is None) and name not in DOCUMENTED:
            refused[name] = "its size or family has no vCPU or memory rule here"
            continue
        memory = 4 if name == "ml.t3.medium" else round((cpus or 0) * (ratio or 0), 1)
        cpus, memory, count = {**EXCEPTIONS, **DOCUMENTED}.get(name, (cpus, memory, count if gpu_family else 0))
        entry: dict[str, Any] = {"vcpus": cpus, "memory_gb": memory, "accelerator_count": count, "price_per_hour": None}
        added.setdefault(family, {})[name] = entry
    return added, refused


def kepler(name: str) -> str:
    """Why a p2 type is refused, naming the machine that stands in for its K80s (as ML Engine's K80 maps)."""
    from cloudtrain.catalog import crosscloud

    vcpus, memory, count = P2[name]
    return KEPLER.format(
        count=count, instead=crosscloud.describe(crosscloud.nearest_machine("sagemaker", "K80", count, vcpus, memory))
    )


def dump(value: Any, indent: int = 0) -> str:
    """JSON as the catalog's files are written: two-space indents, a short dict or list of plain values on one line."""
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or (
        all(not isinstance(v, dict | list) for v in _values(value)) and indent + len(flat) <= 110
    ):
        return flat
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, list):
        return "[\n" + ",\n".join(inner + dump(v, indent + 2) for v in value) + f"\n{pad}]"
    items = (f"{inner}{json.dumps(k, ensure_ascii=False)}: {dump(v, indent + 2)}" for k, v in value.items())
    return "{\n" + ",\n".join(items) + f"\n{pad}}}"


def _values(value: dict[str, Any] | list[Any]) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    added, refused = additions(data)
    if args.check:
        print(f"{sum(len(v) for v in added.values())} missing" if added else "fresh")
        return 1 if added else 0
    for family, types in added.items():
        series = data["series"].setdefault(family, {"types": {}})
        if family in GPU_FAMILIES:
            series.setdefault("accelerator", GPU_FAMILIES[family])
            data["accelerators"].setdefault(GPU_FAMILIES[family], {"gpu": GPU_FAMILIES[family]})
        series["types"].update(types)
    data["_without_gpu_facts"] = refused
    data["_source"]["estimated_series"] = (
        "types botocore's TrainingInstanceType accepts that the pricing pages above were not read for, added by "
        "tools/sagemaker_instance_types.py: vCPUs from EC2's size names, memory from the family's GiB per vCPU, "
        "GPUs from sagemaker-core's instance_gpu_info.json, else from "
        + DOCUMENTED_SOURCE
        + "; Blackwell types from "
        + BLACKWELL_SOURCE
        + "; no price"
    )
    DATA.write_text(dump(data) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
