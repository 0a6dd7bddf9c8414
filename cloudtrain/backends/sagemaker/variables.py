"""The environment variables the SageMaker backend reads or sets: its section of docs/reference/environment.md
(gathered by :func:`cloudtrain.environment_vars.every_variable`)."""

from __future__ import annotations

from cloudtrain.environment_vars import Variable

ABOUT = "What the SageMaker backend and boto3 read from your shell."
VARIABLES = (
    Variable(
        "AWS_PROFILE",
        "sagemaker",
        "you; boto3",
        "boto3's credential chain (`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`, …); without credentials the error says "
        "to run `aws configure`",
    ),
    Variable(
        "AWS_ENDPOINT_URL",
        "sagemaker",
        "you; boto3",
        "another endpoint (or per service `AWS_ENDPOINT_URL_S3`, `_SAGEMAKER`, `_CLOUDWATCH_LOGS`); the tests point "
        "it at moto. With an endpoint set, `StartLiveTail` goes to it as it is, without the `stream-` host prefix",
    ),
    Variable(
        "AWS_MAX_ATTEMPTS",
        "sagemaker",
        "you; the SageMaker backend, boto3",
        "the attempts of a retried call; default 5 ([exit codes](exit-codes.md))",
    ),
)
