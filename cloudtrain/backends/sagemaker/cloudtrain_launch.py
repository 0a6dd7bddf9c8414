"""cloudtrain's launcher: the ``sagemaker_program`` of every cloudtrain SageMaker job.

Copied as is to the top of ``sourcedir.tar.gz`` beside ``dist/<package>.tar.gz``; the container runs it from
/opt/ml/code. It pip-installs the sdist (and so its requirements), then replaces itself with ``python -m
<cloudtrain_module> <cloudtrain_args> --key=value …`` (hyperparameters in the order sent), so the module's exit
status is the job's and ``TF_CONFIG`` and ``SM_*`` reach it unchanged. With ``secrets:`` the module runs through
``python -m cloudtrain_secrets`` (in the sdist); a script job with secrets has this as its program and the script
in ``sagemaker_cloudtrain_script``: it reads the secrets (``cloudtrain_secrets.py`` beside it) and execs ``python
SCRIPT ARGS``. The module and arguments come from ``$SM_INPUT_CONFIG_DIR/hyperparameters.json``; the container's
``--key value`` arguments are ignored. Standard library only, Python 3.7+: it runs in whatever image the job uses."""

from __future__ import annotations  # annotations stay text: 3.7 reads ``list[str]`` without evaluating it

import glob
import importlib.util
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

CONFIG_DIR_ENV = "SM_INPUT_CONFIG_DIR"
DEFAULT_CONFIG_DIR = "/opt/ml/input/config"
RESERVED_PREFIXES = ("sagemaker_", "cloudtrain_", "_")
SECRET_PREFIX = "CLOUDTRAIN_SECRET_"  # the references of a job with secrets (see cloudtrain_secrets)
RUN_MODULE_ENV = "CLOUDTRAIN_RUN_MODULE"
SECRETS_MODULE = "cloudtrain_secrets"
SCRIPT_KEY = "sagemaker_cloudtrain_script"


def read_hyperparameters(config_dir: str) -> dict[str, Any]:
    """The hyperparameters file, each value JSON-decoded (a value that is not JSON stays text)."""
    with open(os.path.join(config_dir, "hyperparameters.json")) as f:
        raw = json.load(f)
    decoded: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            decoded[key] = json.loads(value)
        except (TypeError, ValueError):
            decoded[key] = value
    return decoded


def module_command(hyperparameters: Mapping[str, Any], python: str = sys.executable) -> list[str]:
    """``[python, -m, module, *args, --key=value …]``, as ``JobSpec.module_args`` builds them."""
    module = hyperparameters.get("cloudtrain_module")
    if not module:
        raise SystemExit("cloudtrain: hyperparameter cloudtrain_module is missing; was this job created by cloudtrain?")
    args = [str(a) for a in hyperparameters.get("cloudtrain_args") or []]
    for key, value in hyperparameters.items():
        if not key.startswith(RESERVED_PREFIXES):
            args.append(f"--{key}={_arg(value)}")
    return [python, "-m", module] + args


def _arg(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def install_command(here: str, python: str = sys.executable) -> list[str]:
    sdists = sorted(glob.glob(os.path.join(here, "dist", "*.tar.gz")))
    if len(sdists) != 1:
        raise SystemExit(f"cloudtrain: expected one sdist in {os.path.join(here, 'dist')}, found {len(sdists)}")
    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
    if importlib.util.find_spec("setuptools") is not None:
        # Build with the image's setuptools: no download of a build environment.
        cmd.append("--no-build-isolation")
    return cmd + [sdists[0]]


def with_secrets(
    command: list[str], environ: Mapping[str, str] = os.environ
) -> tuple[list[str], dict[str, str] | None]:
    """``python -m MODULE ARGS`` → (``python -m cloudtrain_secrets ARGS``, the environment naming MODULE)
    when the job has secrets; unchanged (environment None) without."""
    if not any(key.startswith(SECRET_PREFIX) for key in environ):
        return command, None
    env = dict(environ)
    env[RUN_MODULE_ENV] = command[2]
    return command[:2] + [SECRETS_MODULE] + command[3:], env


def run_script(here: str, script: str, argv: list[str]) -> int:
    """A script job with secrets: read them, then become ``python SCRIPT ARGS``."""
    sys.path.insert(0, here)
    import cloudtrain_secrets  # beside this file on the machine (sys.path above), not a module of cloudtrain

    try:
        env = cloudtrain_secrets.environment_with_secrets()
    except cloudtrain_secrets.SecretError as exc:
        print(f"cloudtrain: cannot read secret {exc}", file=sys.stderr, flush=True)
        return 1
    command = [sys.executable, script] + list(argv)
    print("cloudtrain: " + " ".join(shlex.quote(c) for c in command), flush=True)
    sys.stderr.flush()
    os.execve(command[0], command, env)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    hyperparameters = read_hyperparameters(os.environ.get(CONFIG_DIR_ENV, DEFAULT_CONFIG_DIR))
    if hyperparameters.get(SCRIPT_KEY):
        return run_script(here, hyperparameters[SCRIPT_KEY], sys.argv[1:])
    install = install_command(here)
    print("cloudtrain: " + " ".join(shlex.quote(c) for c in install), flush=True)
    code = subprocess.call(install)
    if code != 0:
        print(f"cloudtrain: pip install failed with exit code {code}", file=sys.stderr, flush=True)
        return code
    command, env = with_secrets(module_command(hyperparameters))
    print("cloudtrain: " + " ".join(shlex.quote(c) for c in command), flush=True)
    sys.stderr.flush()
    if env is None:
        os.execv(command[0], command)
    os.execve(command[0], command, env)


if __name__ == "__main__":
    sys.exit(main())
