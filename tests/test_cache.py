"""`cloudtrain cache` shows the cache's size; `cloudtrain cache prune` keeps the last N packages and environments."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from cloudtrain.cli import main
from cloudtrain.history import cache_dir


def _age(path: Path, hours: float) -> None:
    stamp = time.time() - hours * 3600
    os.utime(path, (stamp, stamp))


def _cache() -> Path:
    """Four packages (newest first: p0 … p3), three package envs on one image env, a build in progress."""
    root = cache_dir()
    packages, envs = root / "packages", root / "envs"
    packages.mkdir(parents=True)
    for i in range(4):
        path = packages / f"p{i}-0.1-{i:012d}.tar.gz"
        path.write_bytes(b"x" * 1000)
        _age(path, i + 1)
    (envs / "image-base").mkdir(parents=True)
    (envs / "image-base" / "cloudtrain-env.json").write_text(json.dumps({"kind": "image"}))
    _age(envs / "image-base" / "cloudtrain-env.json", 48)
    _age(envs / "image-base", 48)
    for i in range(3):
        env = envs / f"pkg-{i}"
        (env / "lib").mkdir(parents=True)
        (env / "lib" / "big").write_bytes(b"y" * 5000)
        marker = env / "cloudtrain-env.json"
        marker.write_text(json.dumps({"kind": "package", "image": "image-base"}))
        _age(env, 100)
        _age(marker, i + 1)  # the marker is rewritten on each use: that is what counts
    (envs / ".tmp-pkg-9-12345").mkdir()
    (root / "jobs.jsonl").write_text("{}\n")
    return root


def test_cache_shows_each_part_and_the_total(capsys):
    _cache()
    assert main(["cache", "-o", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    items = {i["name"]: i for i in shown["items"]}
    assert items["packages"]["entries"] == 4 and items["packages"]["bytes"] == 4000
    assert items["envs"]["entries"] == 4 and items["envs"]["bytes"] >= 15000
    assert shown["bytes"] == sum(i["bytes"] for i in shown["items"])
    assert main(["cache"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert rows["packages"][1:] == ["4", "3.906", "KiB"]  # 4,000 bytes, through numbers.size (the one byte formatter)


def test_prune_keeps_the_last_n_and_the_image_they_stand_on(capsys):
    root = _cache()
    assert main(["cache", "prune", "--keep", "2", "--dry-run"]) == 0
    assert len(list((root / "packages").iterdir())) == 4  # a dry run removes nothing
    assert main(["cache", "prune", "--keep", "2"]) == 0
    out = capsys.readouterr().out
    assert sorted(p.name for p in (root / "packages").iterdir()) == [
        "p0-0.1-000000000000.tar.gz",
        "p1-0.1-000000000001.tar.gz",
    ]
    assert sorted(p.name for p in (root / "envs").iterdir()) == [".tmp-pkg-9-12345", "image-base", "pkg-0", "pkg-1"]
    assert (root / "jobs.jsonl").exists()
    assert "removed 3 items, " in out


def test_prune_says_one_item_in_the_singular(capsys):
    _cache()
    assert main(["cache", "prune", "--keep", "3"]) == 0  # the oldest package goes; three package envs stay
    assert capsys.readouterr().out.splitlines()[-1] == (
        "removed 1 item, 1000 bytes; kept the last 3 packages and environments"
    )  # numbers.size, as everywhere


def test_prune_to_zero_and_an_empty_cache(capsys):
    assert main(["cache", "prune", "--keep", "0"]) == 0  # no cache folder yet: nothing to do
    root = _cache()
    assert main(["cache", "prune", "--keep", "0"]) == 0
    assert list((root / "packages").iterdir()) == []
    assert [p.name for p in (root / "envs").iterdir()] == [".tmp-pkg-9-12345"]
