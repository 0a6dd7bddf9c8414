"""At submit, each cloud reference is checked with the user's credentials (the Secret Manager fake with
a user's ADC file, moto's Secrets Manager): a missing secret is refused in one line, one the user
may not see is a warning, and the value is never read."""

from __future__ import annotations

import pytest

from cloudtrain.backends.secrets_here import check_exist
from cloudtrain.errors import UsageError

HF = "projects/my-project/secrets/hf-token"


@pytest.fixture
def user(secret_manager, tmp_path, monkeypatch):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", secret_manager.user_credentials(tmp_path / "adc.json"))
    return secret_manager


def _check(secrets):
    import os

    warnings: list[str] = []
    check_exist(secrets, os.environ, warn=warnings.append)
    return warnings


def test_an_existing_gcp_secret_passes_without_reading_its_value(user):
    user.add(HF, "v")
    assert _check({"HF_TOKEN": f"gcp:{HF}/versions/latest"}) == []
    assert not [path for path, _ in user.requests if path.endswith(":access")]


def test_a_missing_gcp_secret_is_refused_in_one_line(user):
    with pytest.raises(UsageError) as info:
        _check({"HF_TOKEN": f"gcp:{HF}/versions/latest"})
    assert str(info.value) == (
        f"secrets: HF_TOKEN: gcp:{HF}/versions/latest does not exist (404 NOT_FOUND: Secret "
        f"[{HF}] not found or has no versions.) — check the reference, or create the secret "
        "(docs/how-to/secrets.md)"
    )
    assert info.value.exit_code == 2


def test_a_gcp_secret_the_user_may_not_see_is_a_warning(user):
    user.add(HF, "v")
    user.denied.add(HF)
    assert _check({"HF_TOKEN": f"gcp:{HF}/versions/latest"}) == [
        f"secrets: HF_TOKEN: could not check gcp:{HF}/versions/latest with your credentials (403 PERMISSION_DENIED: "
        f"Permission 'secretmanager.versions.get' denied for resource '{HF}/versions/latest' (or it may not "
        "exist).); the job's service account must be able to read it"
    ]


def test_aws_secrets_exist_or_are_refused(aws):
    arn = aws.client("secretsmanager", "us-east-1").create_secret(Name="db", SecretString="pw")["ARN"]
    assert _check({"DB_PASSWORD": f"aws:{arn}"}) == []
    gone = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gone-AbCdEf"
    with pytest.raises(
        UsageError,
        match=r"^secrets: DB_PASSWORD: aws:arn:.*:gone-AbCdEf does not exist "
        r"\(ResourceNotFoundException: ",
    ):
        _check({"DB_PASSWORD": f"aws:{gone}"})
