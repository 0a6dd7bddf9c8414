"""The staging bucket check answers in one line whatever S3 says (botocore's Stubber)."""

from __future__ import annotations

import pytest
from botocore.stub import Stubber

from cloudtrain.backends.sagemaker.upload import check_bucket, split_s3
from cloudtrain.errors import BackendError


def _s3():
    import boto3

    return boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x").client("s3", region_name="us-east-1")


@pytest.mark.parametrize(
    ("code", "status", "meta", "message"),
    [
        ("404", 404, {}, "staging bucket s3://b does not exist — create it (aws s3 mb s3://b --region us-east-1)"),
        ("403", 403, {}, "no access to staging bucket s3://b — use a bucket these credentials may write to"),
        (
            "301",
            301,
            {"HTTPHeaders": {"x-amz-bucket-region": "ap-south-1"}},
            "staging bucket s3://b is in ap-south-1, the job in us-east-1 — SageMaker reads and writes S3",
        ),
        ("400", 400, {}, "checking s3://b: 400:"),
    ],
)
def test_bucket_problems_are_one_line(code: str, status: int, meta: dict, message: str) -> None:
    s3 = _s3()
    with Stubber(s3) as stub:
        stub.add_client_error(
            "head_bucket", code, "", http_status_code=status, response_meta=meta, expected_params={"Bucket": "b"}
        )
        with pytest.raises(BackendError) as err:
            check_bucket(s3, "b", "us-east-1")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_split_s3() -> None:
    assert split_s3("s3://bucket/a/b/sourcedir.tar.gz") == ("bucket", "a/b/sourcedir.tar.gz")
