"""Offline checks of what only SageMaker reads of a config: its role, its registry, its tuning limits."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.text import FILL_IN

if TYPE_CHECKING:
    from cloudtrain.sweeps.params import Param  # a sweep's parameters: not on a job's dry run

_ROLE_ARN = re.compile(r"^arn:aws[a-z\-]*:iam::\d{12}:role/[\w+=,.@\-/]+$")
_ECR_IMAGE = re.compile(r"^\d{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/[^\s]+$")
#: SageMaker's limits on a tuning job (botocore's model leaves them to the service).
MAX_CATEGORICAL_VALUES = 30
MAX_PARALLEL_TRIALS = 100

Check = tuple[tuple[str, ...], Callable[[], None]]


def settings_checks(loaded: LoadedConfig) -> list[Check]:
    """When SageMaker runs the job: the execution role it runs as."""
    cfg, err = loaded.config, loaded.error

    def role_arn() -> None:
        if not cfg.role_arn:
            raise err(
                ("role_arn",),
                "SageMaker needs an execution role",
                "add role_arn: arn:aws:iam::123456789012:role/SageMakerRole",
            )
        if not _ROLE_ARN.match(cfg.role_arn):
            raise err(
                ("role_arn",),
                f"received {cfg.role_arn!r}; allowed: arn:aws:iam::<12 digits>:role/<name>",
                "copy the role's ARN from the IAM console, e.g. arn:aws:iam::123456789012:role/SageMakerRole",
            )
        if FILL_IN in cfg.role_arn:
            raise err(
                ("role_arn",),
                f"received {cfg.role_arn!r}, the placeholder `cloudtrain init` wrote",
                "write the SageMaker execution role's ARN: arn:aws:iam::<account>:role/<name>",
            )

    def tensorboard() -> None:
        board = cfg.tensorboard
        if isinstance(board, str) and not board.startswith("s3://"):
            raise err(
                ("tensorboard",),
                f"received {board!r}; SageMaker takes true (event files beside the job's outputs) or an s3:// path",
                "tensorboard: true",
            )

    return [(("backend", "role_arn"), role_arn), (("tensorboard",), tensorboard)]


def contract_checks(loaded: LoadedConfig) -> list[Check]:
    """Wherever a job follows SageMaker's contract: Vertex's identity and network keys are refused."""
    cfg, err = loaded.config, loaded.error
    out: list[Check] = []
    if cfg.service_account:

        def service_account() -> None:
            raise err(
                ("service_account",),
                "service_account is a Vertex setting; SageMaker runs as role_arn",
                "remove service_account",
            )

        out.append((("service_account",), service_account))
    if cfg.network:

        def network() -> None:
            raise err(
                ("network",), "network is a Vertex setting", "for SageMaker VPCs, remove network (not supported yet)"
            )

        out.append((("network",), network))
    return out


def check_container(loaded: LoadedConfig) -> None:
    """SageMaker pulls training images from Amazon ECR only."""
    if loaded.config.container is None:  # asked only of a container: job
        return
    image = loaded.config.container.image_uri
    if not _ECR_IMAGE.match(image):
        raise loaded.error(
            ("container", "image_uri"),
            f"SageMaker runs images from Amazon ECR only, not {image}",
            "push the image to ECR (docker tag + docker push) and set container.image_uri to "
            "ACCOUNT.dkr.ecr.REGION.amazonaws.com/NAME:TAG",
        )


def check_sweep(loaded: LoadedConfig, params: list[Param]) -> None:
    """A tuning job's limits: trials at once, values per categorical parameter."""
    sweep, err = loaded.config.sweep, loaded.error
    if sweep is None:  # asked only of a sweep
        return
    if sweep.parallel_trials > MAX_PARALLEL_TRIALS:
        raise err(("sweep", "parallel_trials"), f"SageMaker runs at most {MAX_PARALLEL_TRIALS} trials at once")
    for param in params:
        count = len(param.grid_values()) if sweep.algorithm == "grid" or param.kind != "double" else 0
        if (
            param.kind != "double"
            and (param.kind != "integer" or sweep.algorithm == "grid")
            and count > MAX_CATEGORICAL_VALUES
        ):
            raise err(
                ("sweep", "params", param.name),
                f"{count} values; SageMaker allows {MAX_CATEGORICAL_VALUES} per categorical parameter",
                "use fewer values or an integer range with algorithm random or bayesian",
            )
