"""The fakes' servers as pytest fixtures, defined once for every test folder (a plugin that
tests/conftest.py registers): one moto server per session, cleaned for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.aws import MotoAws, moto_server, use_moto


@pytest.fixture(scope="session")
def moto_session() -> Iterator[MotoAws]:
    with moto_server() as moto:
        yield moto


@pytest.fixture
def aws(moto_session: MotoAws, monkeypatch: pytest.MonkeyPatch) -> MotoAws:
    """A clean moto server, with boto3 pointed at it (default region us-east-1)."""
    moto_session.reset()
    use_moto(monkeypatch, moto_session)
    return moto_session


@pytest.fixture
def secret_manager(monkeypatch: pytest.MonkeyPatch):
    """A fresh Secret Manager + metadata server fake, with cloudtrain pointed at it."""
    from tests.fakes.secret_manager import secret_manager_server

    with secret_manager_server() as fake:
        for key, value in fake.env().items():
            monkeypatch.setenv(key, value)
        yield fake
