"""``cloudtrain tensorboard`` against hostile paths and careless use (issue 48, deliverable 4; issue 49's
empty event folder), on TensorBoard's own server asked over its HTTP data API: no character of a run's
path changes what it reads, a link out of the run is not served, the server dies with cloudtrain even
by SIGKILL, a server of ours left on the port is stopped, --bind is checked at once."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from cloudtrain.app.tensorboard import serve
from cloudtrain.cli import main
from tests.fakes.events import local_run, write_scalars
from tests.fakes.gcs import free_port
from tests.tensorboard.test_serve_local import _free, get

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_a_comma_and_a_colon_in_a_runs_path_change_nothing_tensorboard_reads(tmp_path) -> None:
    evil = tmp_path / "evil"
    write_scalars(evil, {"stolen": [1.0]})
    run = local_run(tmp_path / f"runs,x:{evil}", "demo-1")  # as --logdir_spec, "x" would read evil/
    write_scalars(run / "logs", {"loss": [0.9, 0.4]})
    with serve(["demo-1"], port=free_port()) as board:
        assert get(board.url + "data/runs") == ["demo-1"]
        assert {run: sorted(tags) for run, tags in get(board.url + "data/plugin/scalars/tags").items()} == {
            "demo-1": ["loss"]
        }


def test_a_link_in_the_event_folder_out_of_the_run_is_not_served(tmp_path, caplog) -> None:
    outside = tmp_path / "someone-elses"
    write_scalars(outside / "train", {"secret_metric": [3.0]})
    run = local_run(tmp_path / "runs", "demo-1")
    write_scalars(run / "logs", {"loss": [0.9, 0.4]})
    os.symlink(outside, run / "logs" / "elsewhere")
    os.symlink(outside / "train" / os.listdir(outside / "train")[0], run / "logs" / "events.out.tfevents.9.x")
    with caplog.at_level(logging.WARNING), serve(["demo-1"], port=free_port()) as board:
        assert get(board.url + "data/runs") == ["demo-1"]
        assert sorted(get(board.url + "data/plugin/scalars/tags")["demo-1"]) == ["loss"]
    said = [r.getMessage() for r in caplog.records if "not followed" in r.getMessage() or "not read" in r.getMessage()]
    assert len(said) == 2 and any("elsewhere is a link to a folder: not followed" in s for s in said), said


def test_an_event_folder_that_is_a_link_out_of_the_run_is_one_line(tmp_path, capsys) -> None:
    outside = tmp_path / "someone-elses"
    write_scalars(outside, {"secret_metric": [3.0]})
    run = local_run(tmp_path / "runs", "demo-1")
    os.symlink(outside, run / "logs")
    assert main(["tensorboard", "demo-1", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"error: job demo-1: its event folder is a link to {outside}, outside its run folder {run}: not followed"
    ]


def test_an_event_folder_without_event_files_says_so_and_what_writes_them(tmp_path, capsys) -> None:
    run = local_run(tmp_path / "runs", "demo-1")
    (run / "logs").mkdir()
    assert main(["tensorboard", "demo-1", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {run / 'logs'} holds no event files: "), err
    assert "the trainer writes them, with a tf.keras.callbacks.TensorBoard callback" in err[0]


def test_an_unknown_bind_host_is_one_line_not_a_port_in_use(tmp_path, capsys) -> None:
    local_run(tmp_path / "runs", "demo-1")
    assert main(["tensorboard", "demo-1", "--bind", "no-such-host.invalid", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: --bind no-such-host.invalid: no such host or address"), err


def test_binding_every_interface_is_one_warning_naming_them(tmp_path, caplog) -> None:
    run = local_run(tmp_path / "runs", "demo-1")
    write_scalars(run / "logs", {"loss": [0.9]})
    with caplog.at_level(logging.WARNING), serve(["demo-1"], port=free_port(), bind="0.0.0.0") as board:
        assert get(f"http://127.0.0.1:{board.port}/data/runs") == ["demo-1"]
    said = [r.getMessage() for r in caplog.records if "--bind" in r.getMessage()]
    head = "warning: --bind 0.0.0.0 serves the runs to anyone who reaches every interface of this machine ("
    assert len(said) == 1 and said[0].startswith(head) and said[0].endswith(")"), said
    named = said[0][len(head) : -1].split(", ")  # interfaces come and go on a busy machine: these were there
    assert "lo" in named and set(named) & {name for _, name in socket.if_nameindex()} - {"lo"}


def test_the_server_dies_when_cloudtrain_is_killed_with_sigkill(tmp_path) -> None:
    run = local_run(tmp_path / "runs", "demo-1")
    write_scalars(run / "logs", {"loss": [1.0]})
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "tensorboard", "demo-1", "--port", str(port), "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        assert get(url + "data/runs") == ["demo-1"]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        for _ in range(120):  # the parent-death signal reaches the server at once; it stops within seconds
            if _free(port):
                break
            time.sleep(0.25)
        assert _free(port)
    finally:
        proc.kill()


def test_a_server_of_ours_left_on_the_port_is_stopped_at_start(tmp_path, caplog) -> None:
    run = local_run(tmp_path / "runs", "demo-1")
    write_scalars(run / "logs", {"loss": [1.0]})
    port = free_port()
    left = serve(["demo-1"], port=port)  # never stopped: what a cloudtrain killed by an old release left
    try:
        with caplog.at_level(logging.WARNING), serve(["demo-1"], port=port) as board:
            assert left.process.wait(timeout=30) is not None
            assert get(board.url + "data/runs") == ["demo-1"]
    finally:
        left.stop()
    said = [r.getMessage() for r in caplog.records if "left running" in r.getMessage()]
    assert said == [
        f"warning: stopping the TensorBoard cloudtrain left running on port {port} (pid {left.process.pid})"
    ]


def test_a_process_not_ours_on_the_port_is_left_alone(tmp_path) -> None:
    run = local_run(tmp_path / "runs", "demo-1")
    write_scalars(run / "logs", {"loss": [1.0]})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        from cloudtrain.history import cache_dir

        (cache_dir() / "tensorboard").mkdir(parents=True, exist_ok=True)
        sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)  # a pid file naming someone else's
        (cache_dir() / "tensorboard" / f"server-{port}.pid").write_text(json.dumps({"pid": sleeper.pid, "start": 0}))
        try:
            assert main(["tensorboard", "demo-1", "--port", str(port)]) == 2
            assert sleeper.poll() is None
        finally:
            sleeper.kill()
