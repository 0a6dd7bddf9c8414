"""Checks for script jobs written for the SageMaker TensorFlow estimator (``package.script`` / ``package.path`` as
``entry_point`` / ``source_dir``, ``model_dir``, ``distribution``): one line per problem, naming the key and a fix."""

from __future__ import annotations

from collections.abc import Mapping

from cloudtrain.backend_rules import Capability, rules
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.rules import refusal
from cloudtrain.config.schema import JobConfig
from cloudtrain.errors import PackagingError
from cloudtrain.packaging.script import check_script, check_source_dir
from cloudtrain.text import mapped_line

#: The hyperparameter the estimator adds for ``model_dir`` (and the script's argparse reads).
MODEL_DIR_HYPERPARAMETER = "model_dir"
#: ``distribution`` keys of the SDK that cloudtrain does not run, and why / what instead.
_REFUSED = {
    "mpi": "Horovod over MPI is not run by cloudtrain",
    "smdistributed": "SageMaker's own data/model-parallel libraries exist only on SageMaker",
}
_USE_MWMS = (
    "use distribution: {multi_worker_mirrored_strategy: {enabled: true}} with "
    "tf.distribute.MultiWorkerMirroredStrategy (TF_CONFIG is set on every backend)"
)


def check_script_mode(loaded: LoadedConfig) -> None:
    cfg, err = loaded.config, loaded.error
    package = cfg.package
    script = package.script
    for key, reason in _REFUSED.items():
        if cfg.distribution is not None and getattr(cfg.distribution, key) is not None:
            raise err(("distribution", key), f"{key}: {reason}", _USE_MWMS)
    # whose parameter servers a job gets: a run here follows its cloud's contract, any other backend its own
    runner = rules(cfg.cloud) if Capability.RUNS_HERE in rules(cfg.backend).facts.capabilities else rules(cfg.backend)
    if parameter_servers(cfg) and Capability.PARAMETER_SERVERS not in runner.facts.capabilities:
        raise err(("distribution", "parameter_server"), *refusal(runner, Capability.PARAMETER_SERVERS))
    if script is None:
        if cfg.model_dir is not None:
            raise err(
                ("model_dir",),
                "model_dir applies to package.script jobs (the estimator's --model_dir)",
                "remove model_dir, or run a script with package.script",
            )
        return
    if "module" in package.model_fields_set:
        raise err(
            ("package", "module"),
            "give package.script or package.module, not both",
            f"remove package.module to run `python {script}`",
        )
    contract = rules(cfg.cloud)
    if cfg.args and Capability.SCRIPT_ARGS not in contract.facts.capabilities:
        raise err(("args",), *refusal(contract, Capability.SCRIPT_ARGS))
    passed = cfg.model_dir if cfg.model_dir is not None else Capability.SCRIPT_MODEL_DIR in contract.facts.capabilities
    if passed and MODEL_DIR_HYPERPARAMETER in cfg.hyperparameters:
        raise err(
            ("hyperparameters", MODEL_DIR_HYPERPARAMETER),
            f"cloudtrain passes --model_dir to scripts itself on {contract.words.title}, as its SDK does",
            "remove it, or set model_dir: false to pass your own",
        )

    source_dir = loaded.base_dir / package.path
    for field, check in (
        ("path", lambda: check_source_dir(source_dir)),
        ("script", lambda: check_script(source_dir, script)),
    ):
        try:
            check()
        except PackagingError as exc:
            raise err(("package", field), exc.message, exc.hint) from None


def parameter_servers(cfg: JobConfig) -> bool:
    """``distribution: {parameter_server: {enabled: true}}``: the estimator's ``sagemaker_parameter_server_enabled``."""
    ps = cfg.distribution.parameter_server if cfg.distribution else None
    return bool(ps and ps.enabled)


def parameter_server_notes(cfg: JobConfig) -> tuple[str, ...]:
    """A run here with parameter servers: the cloud's TF_CONFIG, but no server process (one line saying so)."""
    if not (
        parameter_servers(cfg)
        and cfg.replica_count > 1
        and Capability.RUNS_HERE in rules(cfg.backend).facts.capabilities
    ):
        return ()
    why = "each replica gets the cloud's TF_CONFIG (master, worker, ps) but no parameter server process starts here"
    return (mapped_line("distribution.parameter_server", "a server on each host", "none", why),)


def script_cmd_args(hyperparameters: Mapping[str, object]) -> list[str]:
    """A script's ``--name value`` pairs as the SageMaker toolkit builds them (``mapping.to_cmd_args``): sorted, ``-x``
    for one letter, ``str`` of the JSON-decoded value (``True``), None as ``""``."""
    out: list[str] = []
    for key in sorted(hyperparameters):
        value = hyperparameters[key]
        out += [f"--{key}" if len(key) > 1 else f"-{key}", "" if value is None else str(value)]
    return out
