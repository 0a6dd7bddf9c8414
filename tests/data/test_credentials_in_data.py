"""A data folder uploaded for a cloud job never carries credentials unless --include names them (issue 41):
by name (.env, .aws/), by content (a key or a token under any name), and never a whole home folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from cloudtrain.data.manifest import build_manifest
from cloudtrain.errors import UsageError
from tests.secrets.credentials import FORMATS, PEM

AWS = "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMPLEKY\n"


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "digits"
    for rel, text in {"train/a.npz": "A" * 100, **files}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({".env": "DB_PASSWORD=x\n"}, ".env is named like an environment file"),
        ({".aws/credentials": AWS}, ".aws is named like a credential file"),
        ({"prod.env": "X=1\n"}, "prod.env is named like an environment file"),
        ({"train/labels.txt": PEM}, "train/labels.txt holds a private key"),
        ({"hf": FORMATS["Hugging Face token"][0] + "\n"}, "hf holds a token"),
        ({"meta/settings.ini": AWS}, "settings.ini holds AWS keys"),
    ],
    ids=[".env", ".aws/credentials", "prod.env", "a key as labels.txt", "a token file", "AWS keys, innocent name"],
)
def test_an_uploaded_folder_refuses_credentials(tmp_path, files, named):
    folder = _folder(tmp_path, files)
    with pytest.raises(UsageError, match="not uploaded without --include") as refused:
        build_manifest(folder, include=())
    assert named in str(refused.value) and "--include PATTERN" in str(refused.value)
    rel = next(iter(files))
    include = [rel.split("/")[0] if rel.startswith(".aws") else rel]
    got = build_manifest(folder, include=include)  # named on purpose: uploaded
    assert rel in {f.path for f in got.files}


def test_the_verdict_is_kept_with_the_hash_and_still_refuses_from_the_cache(tmp_path):
    folder = _folder(tmp_path, {"notes.txt": PEM})
    cache = tmp_path / "hashes.json"
    for _ in range(2):  # the second time every hash comes from the cache
        with pytest.raises(UsageError, match="notes.txt holds a private key"):
            build_manifest(folder, hash_cache=cache, include=())


def test_a_folder_not_uploaded_is_not_checked(tmp_path):
    """--local links the folder in place and a bucket channel's download is the bucket's: include=None."""
    folder = _folder(tmp_path, {".env": "X=1\n"})
    assert ".env" in {f.path for f in build_manifest(folder).files}


def test_a_home_folder_is_never_uploaded(tmp_path):
    home = _folder(tmp_path, {".bashrc": "x", ".config/gh/hosts.yml": "oauth_token: x"})
    with pytest.raises(UsageError, match=r"is a home folder \(it holds \.bashrc, \.config\)"):
        build_manifest(home, include=["*"])
