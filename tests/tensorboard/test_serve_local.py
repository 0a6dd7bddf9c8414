"""``cloudtrain tensorboard`` over local runs: TensorBoard's own server, asked over its HTTP data API which
runs and scalar tags it serves; a port in use is one line naming the next free port."""

from __future__ import annotations

import json
import socket
import urllib.request
from typing import Any

import pytest

from cloudtrain.app.tensorboard import serve
from cloudtrain.cli import main
from cloudtrain.errors import UsageError
from tests.fakes.events import local_run, write_scalars
from tests.fakes.gcs import free_port

pytestmark = [pytest.mark.slow, pytest.mark.server]


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def test_two_local_runs_are_served_each_named_by_its_job_with_its_own_scalars(tmp_path) -> None:
    first = local_run(tmp_path / "runs", "mnist-20261129-010203-aaaaaa")
    second = local_run(tmp_path / "runs", "mnist-20261129-020304-bbbbbb", board="output/tensorboard")
    write_scalars(first / "logs", {"loss": [0.9, 0.5], "accuracy": [0.6, 0.8]})
    write_scalars(second / "output" / "tensorboard", {"epoch_loss": [1.2, 0.7, 0.4]})
    port = free_port()
    with serve(["mnist-20261129-010203-aaaaaa", "mnist-20261129-020304-bbbbbb"], port=port) as board:
        assert board.url == f"http://127.0.0.1:{port}/"
        assert [run.source for run in board.runs] == [str(first / "logs"), str(second / "output" / "tensorboard")]
        runs = get(board.url + "data/runs")
        assert sorted(runs) == ["mnist-20261129-010203-aaaaaa", "mnist-20261129-020304-bbbbbb"]
        tags = get(board.url + "data/plugin/scalars/tags")
        assert {run: sorted(found) for run, found in tags.items()} == {
            "mnist-20261129-010203-aaaaaa": ["accuracy", "loss"],
            "mnist-20261129-020304-bbbbbb": ["epoch_loss"],
        }
        values = get(board.url + "data/plugin/scalars/scalars?run=mnist-20261129-020304-bbbbbb&tag=epoch_loss")
        assert [(step, round(value, 3)) for _, step, value in values] == [(0, 1.2), (1, 0.7), (2, 0.4)]
    assert board.process.poll() is not None  # stopped with the block


def test_a_port_in_use_is_one_line_naming_the_next_free_port(tmp_path, capsys) -> None:
    local_run(tmp_path / "runs", "demo-1")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        with pytest.raises(UsageError) as refused:
            serve(["demo-1"], port=port)
        assert main(["tensorboard", "demo-1", "--port", str(port)]) == 2
    following = next(p for p in range(port + 1, port + 50) if _free(p))
    assert str(refused.value) == f"port {port} on 127.0.0.1 is in use — the next free port is {following}: " + (
        f"pass --port {following}"
    )
    assert capsys.readouterr().err.splitlines() == [f"error: {refused.value}"]


def test_a_job_whose_run_folder_is_gone_is_one_line(tmp_path, capsys) -> None:
    folder = local_run(tmp_path / "runs", "gone-1")
    import shutil

    shutil.rmtree(folder)
    assert main(["tensorboard", "gone-1", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "gone-1" in err[0] and "error:" in err[0]


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_the_command_prints_the_url_as_json_and_stops_cleanly_on_ctrl_c(tmp_path) -> None:
    import os
    import signal
    import subprocess
    import sys

    run = local_run(tmp_path / "runs", "cli-run-1")
    write_scalars(run / "logs", {"loss": [1.0, 0.5]})
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "tensorboard", "cli-run-1", "--port", str(port), "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        shown = json.loads(proc.stdout.readline())
        assert shown == {
            "url": f"http://127.0.0.1:{port}/",
            "runs": {"cli-run-1": {"job": "cli-run-1", "source": str(run / "logs")}},
        }
        assert get(shown["url"] + "data/runs") == ["cli-run-1"]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert err.splitlines()[-1] == "stopped"
    assert _free(port)  # TensorBoard went with it
