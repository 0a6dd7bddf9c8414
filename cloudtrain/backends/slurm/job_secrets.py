"""``secrets:`` on Slurm: ``shell:NAME`` read where ``sbatch`` runs (the login node, or this machine without
one) at submit; the values reach the tasks only through a 0600 file in the run folder
(``slurm/secrets.json``), never ``job.sh``, ``tasks.json``, the dry run or history. The same file lists
the values to mask (those and the secret-looking ``env:`` values), so every follower and status, a re-attached
one included, shows ``***`` for them as ``--local`` does (``readout.py`` reads them with the run's files)."""

from __future__ import annotations

import json
import os
import shlex

from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.errors import UsageError
from cloudtrain.secrets.masking import secret_names
from cloudtrain.secrets.refs import parse_ref
from cloudtrain.spec import JobSpec

SECRETS_FILE = "slurm/secrets.json"


def secrets_path(run: str) -> str:
    return f"{run.rstrip('/')}/{SECRETS_FILE}"


def resolve(spec: JobSpec, shell: ClusterShell) -> dict[str, str]:
    """``{name: value}`` of the spec's ``secrets:``, read where sbatch runs; one line naming a missing one."""
    values: dict[str, str] = {}
    where = shell.login or "this machine"
    for name, text in spec.secrets.items():
        ref = parse_ref(text)
        if shell.remote:
            found = shell.run(["sh", "-c", f"printenv {shlex.quote(ref.target)}"], check=False)
            value = found.stdout.decode(errors="replace").removesuffix("\n") if found.returncode == 0 else None
        else:
            value = os.environ.get(ref.target)
        if value is None:
            raise UsageError(
                f"secrets: {name}: {text}: ${ref.target} is not set on {where}",
                hint=f"export {ref.target}=… in ~/.bashrc on {where} (ssh runs a non-interactive shell)"
                if shell.remote
                else f"export {ref.target}=… before cloudtrain submit",
            )
        values[name] = value
    return values


def needs_file(spec: JobSpec) -> bool:
    """Whether the job has values to keep private: ``secrets:`` or ``env:`` values that look secret."""
    return bool(spec.secrets) or bool(secret_names(spec.env))


def write(spec: JobSpec, shell: ClusterShell, run: str, values: dict[str, str]) -> None:
    """The 0600 file the launcher reads the values from and followers read the mask from."""
    mask = [*values.values(), *(spec.env[n] for n in secret_names(spec.env))]
    shell.write(secrets_path(run), json.dumps({"env": values, "mask": mask}).encode(), 0o600)
