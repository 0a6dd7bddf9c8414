"""Regions × accelerators, offline: a region that does not offer the machine's GPUs is refused by
``validate`` in one line naming the nearest regions that do; the cross-cloud mapping picks a region
that has the mapped machine. The data (data/accelerator_regions.json) names, per cloud, the pages its rows
rest on and the date each was checked; the rows below were checked against them on 2026-11-29 (a changed
row has a case of its own)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cloudtrain import catalog
from cloudtrain.catalog import availability
from cloudtrain.catalog._data import DATA_DIR
from cloudtrain.cli import main
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((DATA_DIR / "accelerator_regions.json").read_text())

VERTEX = """\
name: t
backend: vertex
region: {region}
project: p
staging_bucket: gs://b
machine: {machine}
package: {{path: {trainer}, module: trainer.task}}
"""
SAGEMAKER = """\
name: t
backend: sagemaker
region: {region}
staging_bucket: s3://b
role_arn: arn:aws:iam::123456789012:role/R
machine: {machine}
package: {{path: {trainer}, module: trainer.task}}
"""


def _write(tmp_path: Path, template: str, region: str, machine: str) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(template.format(region=region, machine=machine, trainer=ROOT / "trainer"))
    return path


T4 = "{type: n1-standard-8, accelerator: NVIDIA_TESLA_T4, accelerator_count: 1}"
V100 = "{type: n1-standard-8, accelerator: NVIDIA_TESLA_V100, accelerator_count: 1}"
A100 = "{type: a2-highgpu-1g}"
H100 = "{type: a3-highgpu-1g}"
L4 = "{type: g2-standard-8}"
P100 = "{type: n1-standard-8, accelerator: NVIDIA_TESLA_P100, accelerator_count: 1}"


@pytest.mark.parametrize(
    ("template", "region", "machine", "message", "hint"),
    [
        (
            VERTEX,
            "europe-west6",
            T4,
            "Vertex AI offers no NVIDIA_TESLA_T4 (T4) in europe-west6; nearest regions with it: "
            "europe-west3, europe-west1, europe-west4",  # Compute Engine has no T4 in europe-west6
            "set region: europe-west3, or a machine with NVIDIA_L4",  # L4: Compute Engine has it there
        ),
        (
            VERTEX,
            "asia-northeast2",
            V100,
            "Vertex AI offers no NVIDIA_TESLA_V100 (V100) in asia-northeast2; nearest regions with it: "
            "asia-east1, us-west1, europe-west4",  # Osaka–Eemshaven is shorter than Osaka–Iowa
            "set region: asia-east1, or another machine",
        ),
        (
            VERTEX,
            "europe-west2",
            A100,
            "Vertex AI offers no a2-highgpu-1g (A100) in europe-west2; nearest regions with it: europe-west4, "
            "me-west1, us-east1",
            "set region: europe-west4, or a machine with NVIDIA_TESLA_T4 / NVIDIA_L4",
        ),
        (  # us-south1 was listed: Compute Engine has no a3-highgpu there
            VERTEX,
            "us-south1",
            H100,
            "Vertex AI offers no a3-highgpu-1g (H100) in us-south1; nearest regions with it: us-central1, us-east5, "
            "us-west4",
            "set region: us-central1, or another machine",
        ),
        (  # EC2 prices g6e in ap-south-2 and has no p4d there; ap-south-1 was not listed
            SAGEMAKER,
            "ap-south-2",
            "{type: ml.p4d.24xlarge}",
            "SageMaker offers no ml.p4d.24xlarge (A100) in ap-south-2; nearest regions with it: "
            "ap-south-1, ap-southeast-1, ap-northeast-2",
            "set region: ap-south-1, or a machine with ml.g6e",
        ),
        (
            SAGEMAKER,
            "eu-west-3",
            "{type: ml.p4d.24xlarge}",
            "SageMaker offers no ml.p4d.24xlarge (A100) in eu-west-3; nearest regions with it: eu-west-2, "
            "eu-central-1, eu-west-1",
            "set region: eu-west-2, or another machine",
        ),
        (  # ca-central-1 was not listed
            SAGEMAKER,
            "eu-west-3",
            "{type: ml.p5.48xlarge}",
            "SageMaker offers no ml.p5.48xlarge (H100) in eu-west-3; nearest regions with it: eu-west-2, eu-north-1, "
            "ca-central-1",
            "set region: eu-west-2, or another machine",
        ),
        (  # eu-central-1 was listed: EC2 sells no p3dn there
            SAGEMAKER,
            "ap-southeast-1",
            "{type: ml.p3dn.24xlarge}",
            "SageMaker offers no ml.p3dn.24xlarge (V100-32GB) in ap-southeast-1; nearest regions with it: "
            "ap-northeast-1, eu-west-1, us-west-2",
            "set region: ap-northeast-1, or a machine with ml.p3 / ml.p4d",
        ),
        (  # ap-south-1 was listed: EC2 sells no p3 there
            SAGEMAKER,
            "ap-south-1",
            "{type: ml.p3.2xlarge}",
            "SageMaker offers no ml.p3.2xlarge (V100) in ap-south-1; nearest regions with it: ap-southeast-1, "
            "ap-northeast-2, eu-central-1",  # China's regions are nearer but need an account of their own
            "set region: ap-southeast-1, or a machine with ml.p4d / ml.p5 / ml.g6e",
        ),
        (  # eu-west-2 was listed: EC2 sells no g6e there
            SAGEMAKER,
            "eu-west-2",
            "{type: ml.g6e.xlarge}",
            "SageMaker offers no ml.g6e.xlarge (L40S) in eu-west-2; nearest regions with it: eu-central-1, "
            "eu-south-2, eu-north-1",
            "set region: eu-central-1, or a machine with ml.p3 / ml.p4d / ml.p5",
        ),
        (  # EC2 sells p4de in Tokyo, but SageMaker's API reference names us-east-1 and us-west-2 only
            SAGEMAKER,
            "ap-northeast-1",
            "{type: ml.p4de.24xlarge}",
            "SageMaker offers no ml.p4de.24xlarge (A100-80GB) in ap-northeast-1; nearest regions with it: "
            "us-west-2, us-east-1",
            "set region: us-west-2, or a machine with ml.p3 / ml.p3dn / ml.p4d / ml.p5 / ml.g6e",
        ),
        (  # a region of AWS China is pointed to the other one, not to a region its account cannot use
            SAGEMAKER,
            "cn-north-1",
            "{type: ml.p4d.24xlarge}",
            "SageMaker offers no ml.p4d.24xlarge (A100) in cn-north-1; nearest regions with it: cn-northwest-1",
            "set region: cn-northwest-1, or a machine with ml.p3",
        ),
    ],
)
def test_a_region_without_the_accelerator_is_refused_naming_the_nearest_that_have_it(
    tmp_path, template, region, machine, message, hint
) -> None:
    path = _write(tmp_path, template, region, machine)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    error = info.value
    assert (error.field, error.line, error.detail, error.hint) == ("region", 3, message, hint)


@pytest.mark.parametrize(
    ("template", "region", "machine"),
    [
        (VERTEX, "europe-west4", T4),
        (VERTEX, "asia-east1", V100),
        (VERTEX, "us-central1", A100),
        (VERTEX, "europe-west6", "{type: n1-standard-8}"),  # no GPU: nothing to offer
        (VERTEX, "asia-south1", L4),
        (VERTEX, "australia-southeast1", P100),  # added: the Locations page's note names it
        (VERTEX, "europe-west6", L4),  # added: Compute Engine has L4 there (unverified for Vertex AI)
        (VERTEX, "us-west4", L4),  # disputed, kept listed
        (SAGEMAKER, "us-east-1", "{type: ml.p4d.24xlarge}"),
        (SAGEMAKER, "ap-south-1", "{type: ml.p4d.24xlarge}"),  # added: EC2 sells p4d there
        (SAGEMAKER, "ap-south-2", "{type: ml.g6e.xlarge}"),  # added: EC2 sells g6e there
        (SAGEMAKER, "ap-south-2", "{type: ml.g4dn.xlarge}"),  # a series without a row: not checked
        (SAGEMAKER, "eu-north-1", "{type: ml.p5.48xlarge}"),
        (SAGEMAKER, "cn-northwest-1", "{type: ml.p4d.24xlarge}"),
        (SAGEMAKER, "mx-central-1", "{type: ml.p5.48xlarge}"),  # unchecked: no source covers the region
    ],
)
def test_a_region_that_offers_the_accelerator_passes(tmp_path, template, region, machine) -> None:
    assert load_config(_write(tmp_path, template, region, machine)).config.region == region


def test_validate_prints_the_refusal_as_one_line_and_exits_2(tmp_path, capsys) -> None:
    path = _write(tmp_path, VERTEX, "europe-west6", T4)
    assert main(["validate", "-c", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: {path}:3: region: Vertex AI offers no NVIDIA_TESLA_T4 (T4) in europe-west6; nearest regions with "
        "it: europe-west3, europe-west1, europe-west4 — set region: europe-west3, or a machine with NVIDIA_L4"
    ]


def test_a_local_run_is_not_refused_for_the_clouds_region(tmp_path) -> None:
    path = _write(tmp_path, VERTEX, "europe-west6", T4)
    loaded = load_config(path, ["backend=local", "target=vertex"])
    assert (loaded.config.backend, loaded.config.region) == ("local", "europe-west6")


def test_a_fallback_candidate_in_a_region_without_the_gpu_is_refused_at_its_entry(tmp_path) -> None:
    path = _write(tmp_path, VERTEX, "us-central1", T4)
    path.write_text(path.read_text() + "fallback:\n  - {region: europe-west4}\n  - {region: europe-west6}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == "fallback[1] → region"
    assert "offers no NVIDIA_TESLA_T4 (T4) in europe-west6; nearest regions with it: europe-west3" in str(info.value)


@pytest.mark.parametrize(
    ("region", "machine", "mapped_region", "why"),
    [
        ("us-central1", "{type: a2-highgpu-8g}", "us-east-2", "the nearest SageMaker region"),
        ("asia-south1", "{type: a2-highgpu-8g}", "ap-south-1", "the nearest SageMaker region"),
        (
            "europe-west9",
            "{type: a2-highgpu-8g}",
            "eu-west-2",
            "the nearest SageMaker region with ml.p4d.24xlarge (8 × A100); eu-west-3 has none",
        ),
        (
            "europe-west6",
            "{type: a2-highgpu-8g}",
            "eu-central-1",
            "the nearest SageMaker region with ml.p4d.24xlarge (8 × A100); eu-central-2 has none",
        ),
        ("europe-west6", "{type: n1-standard-8}", "eu-central-2", "the nearest SageMaker region"),
    ],
)
def test_set_backend_maps_to_the_nearest_region_that_has_the_mapped_machine(
    tmp_path, region, machine, mapped_region, why
) -> None:
    path = _write(tmp_path, VERTEX, region, machine)
    loaded = load_config(
        path, ["backend=sagemaker", "role_arn=arn:aws:iam::123456789012:role/R", "staging_bucket=s3://b"]
    )
    assert loaded.config.region == mapped_region
    assert f"mapped: region: {region} → {mapped_region} ({why})" in loaded.notes


def test_sagemaker_to_vertex_maps_to_a_region_with_the_t4(tmp_path) -> None:
    path = _write(tmp_path, SAGEMAKER, "eu-central-2", "{type: ml.g4dn.xlarge}")
    loaded = load_config(path, ["backend=vertex", "project=p", "staging_bucket=gs://b", "role_arn=null"])
    assert loaded.config.region == "europe-west3"
    assert any(
        n.startswith("mapped: region: eu-central-2 → europe-west3 (the nearest Vertex AI region with")
        for n in loaded.notes
    )


def _date(text: str) -> bool:
    return re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) is not None


def test_the_data_names_its_sources_and_checked_dates_and_every_region_it_names_is_real() -> None:
    for cloud in catalog.clouds():
        rows = DATA[cloud]
        assert rows["source"].startswith("https://") and _date(rows["checked"])
        assert rows["note"]  # what the rows rest on
        assert availability.source(cloud) == {k: rows[k] for k in ("source", "checked", "note")}
        pages = availability.sources(cloud)
        assert [p["id"] for p in pages] == [p["id"] for p in rows["sources"]] and len(pages) >= 2
        for page in pages:
            assert _date(page["checked"]) and page["shows"], page
        assert {p["url"] for p in pages if p["url"].startswith("https://")} >= {rows["source"]}
        keys = set(catalog.machines(cloud) and [t.series for t in _types(cloud)]) | {
            m.accelerator for m in catalog.machines(cloud) if m.accelerator
        }
        for key, row in rows["offered"].items():
            regions = row["regions"]
            assert key in keys, (cloud, key)
            assert regions and set(regions) <= set(catalog.regions(cloud)), (cloud, key)
            assert len(set(regions)) == len(regions)
            # each listed region is either confirmed by the training service's page or marked unverified
            assert sorted(row["confirmed"] + row["unverified"]) == sorted(regions), (cloud, key)
            assert availability.unverified(cloud, key) == tuple(row["unverified"])
            assert set(row.get("disputed", {})) <= set(regions), (cloud, key)
        for partition in (rows.get("partitions") or {}).values():
            assert set(partition) <= set(catalog.regions(cloud))
        assert set(rows["unchecked"]) <= set(catalog.regions(cloud))
        assert not any(set(rows["unchecked"]) & set(row["regions"]) for row in rows["offered"].values())
    placed = {k for k in DATA["places"] if not k.startswith("_")}
    assert {r for c in catalog.clouds() for r in catalog.regions(c)} <= placed


@pytest.mark.parametrize(
    ("cloud", "key", "unverified"),
    [
        ("sagemaker", "ml.p4de", ()),  # SageMaker's API reference names both regions
        (  # EC2 sells it in each; no SageMaker page could be read
            "sagemaker",
            "ml.p5",
            ("us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1", "eu-north-1")
            + ("eu-west-2", "ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-2", "ap-southeast-3")
            + ("us-gov-west-1",),
        ),
        ("vertex", "NVIDIA_TESLA_V100", ("europe-west4", "asia-east1")),  # the copy of the page is US-only
        ("vertex", "NVIDIA_TESLA_P4", ("northamerica-northeast1", "europe-west4", "asia-southeast1")),
    ],
)
def test_a_row_says_which_regions_no_page_of_the_training_service_confirms(cloud, key, unverified) -> None:
    assert availability.unverified(cloud, key) == unverified


def test_regions_no_source_covers_are_unchecked_and_never_refused() -> None:
    # the EC2 price list read names no price in these; Compute Engine's catalog covers every Vertex AI region
    assert availability.unchecked("sagemaker") == (
        "ap-east-2",
        "ap-southeast-4",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-west-1",
        "mx-central-1",
    )
    assert availability.unchecked("vertex") == ()
    p5 = catalog.resolve_machine("sagemaker", "ml.p5.48xlarge", None, None)
    assert [availability.offers(p5, r) for r in ("ap-southeast-6", "eu-west-3", "eu-west-2")] == [True, False, True]
    assert availability.nearest_offering(p5, "ap-southeast-6") == "ap-southeast-6"


def _types(cloud: str):
    from cloudtrain.catalog.table import table

    return table(cloud).types.values()


def test_distances_rank_the_nearest_regions_by_the_cities() -> None:
    assert availability.distance_km("europe-west6", "eu-central-2") == 0.0  # both Zürich
    assert 290 < availability.distance_km("europe-west6", "europe-west3") < 320  # Zürich–Frankfurt
    assert availability.nearest("ap-south-2", ["us-east-1", "ap-south-1", "ap-southeast-1"]) == [
        "ap-south-1",
        "ap-southeast-1",
        "us-east-1",
    ]


@pytest.mark.parametrize(
    ("template", "region", "machine"),
    [(VERTEX, "europe-west6", T4), (SAGEMAKER, "ap-south-2", "{type: ml.p4d.24xlarge}")],
)
def test_the_errors_page_shows_what_validate_prints(tmp_path, capsys, monkeypatch, template, region, machine) -> None:
    _write(tmp_path, template, region, machine)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "-c", "job.yaml"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line in (ROOT / "docs" / "reference" / "errors.md").read_text().splitlines()
