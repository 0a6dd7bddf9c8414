"""What the training machine will hold: unpacked size, names it can read, and what was left out (and why)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from cloudtrain.errors import PackagingError
from cloudtrain.packaging import build_sdist
from tests.conftest import REPO
from tests.packaging.sdist_helpers import packaged, write


def test_the_size_warning_counts_unpacked_bytes(mini, tmp_path):
    """2 MB of zeros compress to a few KB; the machine still holds 2 MB."""
    (mini / "zeros.bin").write_bytes(bytes(2_000_000))
    built = build_sdist(mini, tmp_path / "out", size_warning_bytes=1_000_000)
    assert built.size < 100_000 < 2_000_000 <= built.unpacked_size
    (warning,) = built.warnings
    assert re.search(
        r"unpacks to 1\.90\d MiB on the training machine \(\d+(\.\d+)? KiB compressed\), above the "
        r"976\.6 KiB warning threshold",
        warning,
    ), warning  # 2 MB + the package's own files
    assert "mini_trainer/zeros.bin (1.907 MiB)" in warning  # 2,000,000 bytes, through numbers.size


def test_a_non_utf8_file_name_is_refused_in_one_line(mini, tmp_path):
    (mini / "data").mkdir()
    open(os.path.join(os.fsencode(mini / "data"), b"caf\xe9.csv"), "wb").close()
    with pytest.raises(PackagingError) as info:
        build_sdist(mini, tmp_path / "out")
    assert str(info.value).startswith("file name mini_trainer/data/caf\\xe9.csv is not valid UTF-8 — rename it")


def test_a_non_utf8_name_that_is_ignored_is_fine(mini, tmp_path):
    open(os.path.join(os.fsencode(mini), b"notes-\xff.txt"), "wb").close()
    write(mini, ".cloudtrainignore", "notes-*\n")
    assert build_sdist(mini, tmp_path / "out").filename


def test_what_was_left_out_is_listed_with_the_reason(mini, tmp_path):
    write(mini, ".env", "API_KEY=secret\n")
    write(mini, "configs/.env.production", "X=1\n")
    write(mini, "keys/prod.pem")
    os.symlink("keys/prod.pem", mini / "innocent.txt")
    write(mini, "scratch/big.bin")
    write(mini, ".cloudtrainignore", "scratch/\n")
    os.symlink("scratch/big.bin", mini / "weights.bin")
    built = build_sdist(mini, tmp_path / "out")
    assert dict(built.left_out) == {
        "mini_trainer/.env": "environment file",
        "mini_trainer/configs/.env.production": "environment file",
        "mini_trainer/keys/prod.pem": "credential-like",
        "mini_trainer/innocent.txt": "link to an excluded file",
        "mini_trainer/weights.bin": "link to an excluded file",
    }
    assert "mini_trainer/.env" not in packaged(built)


def test_the_package_command_and_the_submit_summary_say_what_was_left_out(mini, tmp_path):
    write(mini, ".env", "API_KEY=secret\n")
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "package", str(mini), "--out", str(tmp_path / "d")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "left out: mini_trainer/.env (environment file)" in out.stdout
    config = tmp_path / "job.yaml"
    config.write_text(
        "name: leftout\nbackend: vertex\nregion: us-central1\nproject: p\nstaging_bucket: gs://b\n"
        f"machine: {{type: n1-standard-4}}\npackage: {{path: {mini}, module: mini_trainer.task}}\n"
    )
    dry = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config), "--dry-run"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stderr
    assert re.search(r"^left out:?\s+mini_trainer/\.env \(environment file\)", dry.stdout, re.M)
    as_json = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config), "--dry-run", "-o", "json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert json.loads(as_json.stdout)["package"]["left_out"] == [
        {"path": "mini_trainer/.env", "why": "environment file"}
    ]


def test_a_symlink_loop_names_the_loop(mini, tmp_path):
    os.symlink("b", mini / "a")
    os.symlink("a", mini / "b")
    with pytest.raises(PackagingError) as info:
        build_sdist(mini, tmp_path / "out")
    message = str(info.value)
    assert f"symlink loop in {mini}: a -> b -> a" in message and "permission" not in message
