"""A user package's own lines and events, as a piped ``--local`` run shows them: epoch totals from
``--epochs`` (never "None"), event lines formatted once, Keras bars never joined to TensorFlow's lines."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "tests" / "packages" / "keras_events"


def _config(tmp_path, args: str):
    path = tmp_path / "events.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        name: events
        backend: local
        target: vertex
        region: us-central1
        machine: {{type: n1-standard-4}}
        package: {{path: {PACKAGE}, module: keras_events.task}}
        args: {args}
        """)
    )
    return path


def _chief_lines(result) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [line.split("| ", 1)[1] for line in result.stdout.splitlines() if line.startswith("chief")]


@pytest.mark.slow
def test_a_user_packages_epoch_lines_take_their_total_from_the_args(cli, tmp_path):
    lines = _chief_lines(cli("submit", str(_config(tmp_path, "[--epochs=3]")), "--local", cwd=tmp_path))
    epochs = [line for line in lines if line.startswith("epoch ")]
    assert [line.split("  ")[0] for line in epochs] == ["epoch 1/3", "epoch 2/3", "epoch 3/3"]
    assert epochs[0] == "epoch 1/3  loss 0.5  val_accuracy 0.6"  # 4 significant digits
    # the metric the epoch line showed is not shown again; another one is, formatted, once
    assert [line for line in lines if line.startswith("val_")] == [
        "val_auc 0.8223 (step 1)",
        "val_auc 0.8323 (step 2)",
        "val_auc 0.8423 (step 3)",
    ]
    assert not any('{"' in line for line in lines)  # no raw event JSON


@pytest.mark.slow
def test_without_an_epochs_argument_no_total_is_shown(cli, tmp_path):
    lines = _chief_lines(cli("submit", str(_config(tmp_path, "[]")), "--local", cwd=tmp_path))
    assert [line.split("  ")[0] for line in lines if line.startswith("epoch ")] == ["epoch 1", "epoch 2"]
    assert not any("None" in line for line in lines)


@pytest.mark.slow
def test_a_half_drawn_bar_is_never_joined_to_a_stderr_line(cli, tmp_path):
    lines = _chief_lines(cli("submit", str(_config(tmp_path, "[--epochs=2]")), "--local", cwd=tmp_path))
    warnings = [line for line in lines if "loop_optimizer.cc" in line]
    assert [w.split("] ", 1)[1] for w in warnings] == ["warning in epoch 1", "warning in epoch 2"]
    assert all(w.startswith("W0000") for w in warnings)  # the warning is a line of its own, bar-free
    assert "3/3 ━━━ - loss: 0.5000" in lines and "3/3 ━━━ - loss: 0.2500" in lines  # each bar's last state
