"""The three kinds of ``secrets:`` reference, checked for form only: ``shell:NAME`` (``--local`` only),
``gcp:projects/P/secrets/S/versions/V`` and ``aws:arn:aws:secretsmanager:…:secret:NAME`` (read again at each start).
Whether the secret exists is checked at submit (:mod:`cloudtrain.backends.secrets_here`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cloudtrain.secrets.masking import mask_text

KINDS = ("shell", "gcp", "aws")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_GCP = re.compile(r"^projects/([A-Za-z0-9][A-Za-z0-9.:_-]*)/secrets/([A-Za-z0-9_-]{1,255})/versions/(latest|[1-9]\d*)$")
_AWS = re.compile(r"^arn:aws[a-z-]*:secretsmanager:([a-z]{2}(?:-[a-z]+)+-\d):(\d{12}):secret:([A-Za-z0-9/_+=.@-]+)$")
EXAMPLES = {
    "shell": "shell:WANDB_API_KEY",
    "gcp": "gcp:projects/my-project/secrets/hf-token/versions/latest",
    "aws": "aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf",
}


@dataclass(frozen=True)
class Store:
    """A cloud's secret store, which a job's machine reads references of its kind from."""

    title: str  # as messages name it
    reader: str  # the identity that reads it on the job's machine


STORES = {
    "gcp": Store("Secret Manager (gcp:)", "the job's service account"),
    "aws": Store("Secrets Manager (aws:)", "the job's role"),
}


@dataclass(frozen=True)
class SecretRef:
    kind: str  # shell | gcp | aws
    target: str  # the variable name, the version's resource name, or the secret's ARN

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}"

    @property
    def region(self) -> str | None:
        """An ``aws:`` secret's region (from its ARN)."""
        match = _AWS.match(self.target) if self.kind == "aws" else None
        return match.group(1) if match else None


def parse_ref(text: str) -> SecretRef:
    """``"gcp:projects/…"`` → :class:`SecretRef`; a ``ValueError`` saying what is wrong and what to write."""
    kind, sep, target = text.partition(":")
    if not sep or kind not in KINDS:  # most likely the secret itself: never shown back
        raise ValueError(
            f"received a value ({len(text)} characters, not shown), not a reference; a secret is a reference, "
            "one of " + ", ".join(EXAMPLES.values()) + " — never the value itself"
        )
    if kind == "shell" and not _ENV_NAME.match(target):  # shell:<the value>: not shown either
        raise ValueError(
            f"received shell: and {len(target)} characters (not shown) that are no variable name; "
            "write shell:NAME, NAME a variable of your shell (A-Z, 0-9, _)"
        )
    if kind == "gcp" and not _GCP.match(target):
        hint = " (add /versions/latest)" if re.match(r"^projects/[^/]+/secrets/[^/]+$", target) else ""
        raise ValueError(
            f"received {mask_text(text)!r}; write gcp:projects/PROJECT/secrets/SECRET/versions/latest"
            f" (or a version number){hint}"
        )
    if kind == "aws" and not _AWS.match(target):
        raise ValueError(
            f"received {mask_text(text)!r}; write aws: and the secret's full ARN, "
            "arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME-SUFFIX (aws secretsmanager describe-secret "
            "--secret-id NAME prints it)"
        )
    return SecretRef(kind, target)


def store_command(store: str, name: str, ref: SecretRef, *, project: str | None, region: str) -> tuple[str, str]:
    """For a ``shell:`` reference on a job whose machines read ``store`` references (``gcp``, ``aws``):
    the command that stores the value in that secret store, and the reference to write instead."""
    var = ref.target
    secret = name.lower().replace("_", "-")
    if store == "gcp":
        project = project or "PROJECT"
        command = (
            f'printf %s "${var}" | gcloud secrets create {secret} --project {project} '
            "--replication-policy automatic --data-file=-"
        )
        return command, f"gcp:projects/{project}/secrets/{secret}/versions/latest"
    command = (
        f"aws secretsmanager create-secret --region {region} --name {secret} "
        f'--secret-string "${var}" --query ARN --output text'
    )
    return command, f"aws:<the ARN it prints, arn:aws:secretsmanager:{region}:ACCOUNT:secret:{secret}-XXXXXX>"
