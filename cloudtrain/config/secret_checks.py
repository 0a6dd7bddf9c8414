"""The checks on ``secrets:`` that need the rest of the config: where each kind of reference can be read."""

from __future__ import annotations

import re

from cloudtrain.backend_rules import Capability, rules
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.secrets.refs import STORES, parse_ref, store_command

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_secrets(loaded: LoadedConfig) -> None:
    cfg, err = loaded.config, loaded.error
    if not cfg.secrets:
        return
    if cfg.container is not None:
        raise err(
            ("secrets",),
            "secrets are read by cloudtrain's launcher, which runs in front of a package or "
            "script; a container: job runs your image as it is",
            "read the secret from your own entrypoint, "
            "or run a package (package.path, package.module) instead of container",
        )
    backend = rules(cfg.backend)
    for name, text in cfg.secrets.items():
        if not _ENV_NAME.match(name):
            raise err(("secrets", name), f"{name!r} is not a valid environment variable name", "use A-Z, 0-9 and _")
        if name in cfg.env:
            raise err(("secrets", name), f"{name} is set in env: too", f"remove {name} from env:")
        ref = parse_ref(text)
        if Capability.RUNS_HERE in backend.facts.capabilities:
            continue  # this machine reads every kind, with the user's credentials
        store = backend.facts.secret_kind  # the kind its launcher reads on the job's machine
        if store is None:
            raise err(
                ("secrets", name),
                f"{text}: a {cfg.backend} job has no secret store that cloudtrain reads",
                f"remove {name} from secrets: and read it on the machines with your own code",
            )
        if ref.kind == store:
            continue  # the kind it reads (a cluster: shell:, where its jobs are submitted)
        if store not in STORES:
            raise err(
                ("secrets", name),
                f"{text}: a {cfg.backend} job reads secrets as shell:NAME, from the shell where its jobs are submitted",
                f"export the value there and write {name}: shell:NAME",
            )
        if ref.kind == "shell":
            command, instead = store_command(store, name, ref, project=cfg.project, region=cfg.region)
            raise err(
                ("secrets", name),
                f"{text} is read from this shell, which a {cfg.backend} job cannot see; "
                f"store it in the cloud's secret store: {command}",
                f"then write {name}: {instead}",
            )
        if ref.kind != store:
            raise err(
                ("secrets", name),
                f"{text}: a {cfg.backend} job reads secrets from {STORES[store].title} with its own identity",
                f"store the value there and refer to it as {store}:…",
            )
