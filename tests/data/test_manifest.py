"""A folder's manifest: what it covers, what changes its digest, and the hash cache."""

from __future__ import annotations

import hashlib
import os

import pytest

from cloudtrain.data.manifest import build_manifest
from cloudtrain.errors import UsageError
from tests.data.conftest import make_folder


def file_sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_paths_sizes_and_hashes_sorted(tmp_path):
    folder = make_folder(tmp_path / "d", {"b.npz": b"bb", "a/x.tfrecord": b"x" * 10, "a/y": b""})
    m = build_manifest(folder)
    assert [(f.path, f.size) for f in m.files] == [("a/x.tfrecord", 10), ("a/y", 0), ("b.npz", 2)]
    assert m.files[0].sha256 == file_sha256(folder / "a/x.tfrecord") and m.total_bytes == 12


def test_digest_covers_content_and_names_not_location(tmp_path):
    one = build_manifest(make_folder(tmp_path / "one", {"a": b"1", "b": b"2"}))
    two = build_manifest(make_folder(tmp_path / "two", {"a": b"1", "b": b"2"}))
    assert one.digest == two.digest
    assert build_manifest(make_folder(tmp_path / "c", {"a": b"1", "b": b"3"})).digest != one.digest
    assert build_manifest(make_folder(tmp_path / "r", {"a": b"1", "c": b"2"})).digest != one.digest


def test_hash_cache_is_used_only_while_the_file_is_unchanged(tmp_path):
    folder = make_folder(tmp_path / "d", {"a": b"first"})
    cache = tmp_path / "hashes.json"
    first = build_manifest(folder, hash_cache=cache)
    assert cache.is_file()
    cache.write_text(cache.read_text().replace(first.files[0].sha256, "f" * 64))  # a planted hash is reused…
    assert build_manifest(folder, hash_cache=cache).files[0].sha256 == "f" * 64
    (folder / "a").write_bytes(b"second")  # …until the file changes
    os.utime(folder / "a", ns=(1, 1))
    assert build_manifest(folder, hash_cache=cache).files[0].sha256 == file_sha256(folder / "a")


def test_empty_or_missing_folders_are_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="holds no files"):
        build_manifest(tmp_path / "empty")
    with pytest.raises(UsageError, match="does not exist"):
        build_manifest(tmp_path / "nope")


def test_links_that_stay_inside_the_folder_are_followed(tmp_path):
    folder = make_folder(tmp_path / "d", {"real/a.npz": b"A" * 3, "b.npz": b"B"})
    os.symlink("real/a.npz", folder / "alias.npz")  # a file link inside: uploaded with the target's bytes
    os.symlink(folder / "real", folder / "again")  # a folder link inside: walked like a folder
    manifest = build_manifest(folder)
    assert [(f.path, f.size) for f in manifest.files] == [
        ("again/a.npz", 3),
        ("alias.npz", 3),
        ("b.npz", 1),
        ("real/a.npz", 3),
    ]
    assert manifest.files[1].sha256 == manifest.files[3].sha256


@pytest.mark.parametrize("uri", ["gs://datasets/digits/train/", "gs://datasets/Digits 2/train", "gs://d/x"])
def test_bucket_uris_are_kept_as_written_in_the_spec(project, uri):
    """Object keys are literal: the spec sends the path the user wrote, never a rewritten one."""
    from cloudtrain.config.load import load_config
    from cloudtrain.spec import build_spec
    from tests.conftest import VERTEX_BASE

    path = project(VERTEX_BASE + f"data:\n  train: {uri}\n")
    assert build_spec(load_config(path)).channels["train"].source == uri


@pytest.mark.parametrize(
    ("uri", "odd", "meant"),
    [
        ("gs://datasets//digits/./train/", "//", "gs://datasets/digits/train/"),
        ("gs://datasets/digits/./train", "/./", "gs://datasets/digits/train"),
        ("gs://datasets/digits//", "//", "gs://datasets/digits/"),
    ],
)
def test_empty_and_dot_segments_of_a_bucket_path_are_refused_never_rewritten(project, uri, odd, meant):
    from cloudtrain.config.load import load_config
    from cloudtrain.errors import ConfigError
    from tests.conftest import VERTEX_BASE

    path = project(VERTEX_BASE + f"data:\n  train: {uri}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert f"received {uri!r}; `{odd}` in a bucket path" in str(caught.value)
    assert f"write {meant!r} if that is what you meant" in str(caught.value)
