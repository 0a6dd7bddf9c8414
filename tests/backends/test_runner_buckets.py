"""A bucket channel read on a machine cloudtrain reaches itself (``--local``, Slurm) is read with the client
of the backend whose buckets they are, found through the registry (cloudtrain/backends/runner/buckets.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cloudtrain.backend_rules import Capability
from cloudtrain.backends import LOCAL, get_backend, names
from cloudtrain.backends.runner.buckets import owner
from cloudtrain.errors import UsageError


@pytest.mark.parametrize("name", [n for n in names() if Capability.STAGING in get_backend(n).facts.capabilities])
def test_a_backends_own_bucket_scheme_is_read_through_that_backend(name: str) -> None:
    backend = get_backend(name)
    assert owner(backend.facts.storage_schemes[0]) is backend


def test_a_scheme_no_backend_stages_in_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError, match=r"^no backend reads az:// buckets"):
        owner("az")


def test_a_backend_without_buckets_of_its_own_refuses_to_give_a_store(tmp_path: Path) -> None:
    from tests.backends.local.conftest import make_spec

    local = get_backend(LOCAL)
    with pytest.raises(UsageError, match="has no buckets of its own to read 'data'"):
        local.bucket_store(make_spec(tmp_path), "data")


@pytest.mark.parametrize("name", [n for n in names() if Capability.STAGING in get_backend(n).facts.capabilities])
@pytest.mark.parametrize("bucket", ["team-data-eu", "b.with.dots"])
def test_a_staging_backend_gives_a_store_on_the_bucket_named(
    name: str, bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store is built as a run would build it (no request is sent: the endpoints lead nowhere)."""
    from tests.backends.local.conftest import make_spec

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:9")  # no credentials are looked up
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    backend = get_backend(name)
    store = backend.bucket_store(make_spec(tmp_path), bucket)
    assert (store.scheme, store.bucket) == (backend.facts.storage_schemes[0], bucket)
