"""Endpoints, budgets and project resolution: the settings a user can set."""

from __future__ import annotations

import pytest

from cloudtrain.backends.vertex import settings, variables
from cloudtrain.errors import UsageError


def test_default_endpoints_are_regional_and_global():
    assert settings.vertex_endpoint("europe-west4", {}).address == "europe-west4-aiplatform.googleapis.com"
    assert settings.logging_endpoint({}).address == "logging.googleapis.com"
    assert not settings.vertex_endpoint("us-central1", {}).local


@pytest.mark.parametrize(
    "address, local",
    [
        ("127.0.0.1:8080", True),
        ("localhost:9", True),
        ("[::1]:50051", True),
        ("localhost", True),
        ("us-central1-aiplatform.googleapis.com", False),
        ("10.0.0.5:443", False),
    ],
)
def test_only_loopback_endpoints_are_plain_text(address, local):
    assert settings.Endpoint(address).local is local


def test_endpoints_are_overridable_with_region_placeholder():
    env = {
        variables.VERTEX_ENDPOINT: "{region}-aiplatform.p.googleapis.com:443",
        variables.LOGGING_ENDPOINT: "127.0.0.1:7000",
    }
    assert settings.vertex_endpoint("asia-east1", env).address == "asia-east1-aiplatform.p.googleapis.com:443"
    assert settings.logging_endpoint(env).local


def test_log_read_budget_setting():
    assert settings.log_reads_per_minute({}) == 50
    assert settings.log_reads_per_minute({variables.LOG_READS_PER_MINUTE: "20"}) == 20
    with pytest.raises(UsageError, match="positive whole number"):
        settings.log_reads_per_minute({variables.LOG_READS_PER_MINUTE: "lots"})


def test_project_comes_from_the_flag_then_adc_then_environment():
    assert settings.resolve_project("flag", "adc", {"GOOGLE_CLOUD_PROJECT": "env"}) == "flag"
    assert settings.resolve_project(None, "adc", {"GOOGLE_CLOUD_PROJECT": "env"}) == "adc"
    assert settings.resolve_project(None, None, {"GOOGLE_CLOUD_PROJECT": "env"}) == "env"
    with pytest.raises(UsageError, match="--project"):
        settings.resolve_project(None, None, {})
