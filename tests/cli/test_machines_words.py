"""``cloudtrain machines`` words each cloud as the catalog's data names it (data/clouds.json), byte for byte
as it always read: the --backend choices, the --tpu help, the TPU table's title, the TPU refusals."""

from __future__ import annotations

from cloudtrain.cli import main


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), err


def test_help_offers_the_catalog_s_clouds_and_names_the_tpu_cloud(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # click wraps help at 78 columns at most, never less here
    code, out, _ = _run(capsys, "machines", "--help")
    assert code == 0
    assert "--backend [vertex|sagemaker] Only this cloud." in out
    assert "--tpu Vertex AI's single-host TPU VMs instead: chips, cores, topology, regions." in out


def test_the_tpu_table_is_titled_by_its_cloud(capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)  # off a terminal: the title is the one line on stderr
    code, out, err = _run(capsys, "machines", "--tpu")
    assert code == 0 and out.startswith("machine TPU chips cores topology")
    assert err == (
        "Vertex AI TPU VMs, one host each; prices: us-central1 on-demand list prices taken 2025-01; "
        "TensorFlow images: 2.15\n"
    )


def test_tpu_refusals_name_the_clouds(capsys):
    code, _, err = _run(capsys, "machines", "--tpu", "--backend", "sagemaker", "--gpu", "T4")
    assert (code, err) == (2, "error: SageMaker has no TPUs — cloudtrain machines --tpu (Vertex AI)\n")
    code, _, err = _run(capsys, "machines", "--tpu", "--backend", "vertex", "--gpu", "T4")
    assert (code, err) == (2, "error: --tpu lists TPUs, not GPUs — cloudtrain machines --tpu (Vertex AI)\n")
