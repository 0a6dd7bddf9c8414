"""cloudtrain's launcher: the ``sagemaker_program`` of every cloudtrain SageMaker job.

This file is copied, as is, to the top of ``sourcedir.tar.gz`` next to
``dist/<package>.tar.gz``. The SageMaker TensorFlow training container extracts that
archive into /opt/ml/code and runs ``python cloudtrain_launch.py``; this script then

1. pip-installs the sdist, which pulls in the package's requirements;
2. replaces itself (``exec``) with ``python -m <cloudtrain_module> <cloudtrain_args>
   --key=value …``, the user hyperparameters appended in the order they were sent,
   so the module's exit status (or signal) is the job's and ``TF_CONFIG`` and the
   ``SM_*`` variables reach it unchanged.

The module and its arguments come from the hyperparameters file SageMaker writes
(``$SM_INPUT_CONFIG_DIR/hyperparameters.json``, default /opt/ml/input/config); the
``--key value`` arguments the container passes to this script are ignored.

Standard library only, Python 3.7+: it runs inside whatever image the job uses.
"""

import glob
import importlib.util
import json
import os
import shlex
import subprocess
import sys

CONFIG_DIR_ENV = "SM_INPUT_CONFIG_DIR"
DEFAULT_CONFIG_DIR = "/opt/ml/input/config"
RESERVED_PREFIXES = ("sagemaker_", "cloudtrain_", "_")


def read_hyperparameters(config_dir):
    """The hyperparameters file, each value JSON-decoded (a value that is not JSON stays text)."""
    with open(os.path.join(config_dir, "hyperparameters.json")) as f:
        raw = json.load(f)
    decoded = {}
    for key, value in raw.items():
        try:
            decoded[key] = json.loads(value)
        except (TypeError, ValueError):
            decoded[key] = value
    return decoded


def module_command(hyperparameters, python=sys.executable):
    """``[python, -m, module, *args, --key=value …]``, as ``JobSpec.module_args`` builds them."""
    module = hyperparameters.get("cloudtrain_module")
    if not module:
        raise SystemExit("cloudtrain: hyperparameter cloudtrain_module is missing; was this job created by cloudtrain?")
    args = [str(a) for a in hyperparameters.get("cloudtrain_args") or []]
    for key, value in hyperparameters.items():
        if not key.startswith(RESERVED_PREFIXES):
            args.append("--%s=%s" % (key, _arg(value)))
    return [python, "-m", module] + args


def _arg(value):
    return str(value).lower() if isinstance(value, bool) else str(value)


def install_command(here, python=sys.executable):
    sdists = sorted(glob.glob(os.path.join(here, "dist", "*.tar.gz")))
    if len(sdists) != 1:
        raise SystemExit("cloudtrain: expected one sdist in %s, found %d" % (os.path.join(here, "dist"), len(sdists)))
    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
    if importlib.util.find_spec("setuptools") is not None:
        # Build with the image's setuptools: no download of a build environment.
        cmd.append("--no-build-isolation")
    return cmd + [sdists[0]]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    hyperparameters = read_hyperparameters(os.environ.get(CONFIG_DIR_ENV, DEFAULT_CONFIG_DIR))
    install = install_command(here)
    print("cloudtrain: " + " ".join(shlex.quote(c) for c in install), flush=True)
    code = subprocess.call(install)
    if code != 0:
        print("cloudtrain: pip install failed with exit code %d" % code, file=sys.stderr, flush=True)
        return code
    command = module_command(hyperparameters)
    print("cloudtrain: " + " ".join(shlex.quote(c) for c in command), flush=True)
    sys.stderr.flush()
    os.execv(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
