"""The summary a submit prints before its request (``--dry-run``) or its job: backend, machine, package, cost."""

from __future__ import annotations

import re
import shlex

from cloudtrain.app.prepare import left_out
from cloudtrain.backend_rules import Capability
from cloudtrain.backends import get_backend
from cloudtrain.catalog import built_in_gpus
from cloudtrain.config.schema import Sweep
from cloudtrain.console import Console, counted, escape, money, print_kv
from cloudtrain.data.staging import describe
from cloudtrain.packaging import BuiltPackage
from cloudtrain.packaging.metadata import replaced_tensorflow
from cloudtrain.secrets.masking import mask_args
from cloudtrain.spec import JobSpec, price_basis
from cloudtrain.text.numbers import duration


def print_summary(console: Console, spec: JobSpec, package: BuiltPackage | None) -> None:
    replaced = replaced_tensorflow(package.requirements, spec.tensorflow_version) if package else None
    backend = get_backend(spec.backend)
    local = Capability.RUNS_HERE in backend.facts.capabilities
    machine = f"{spec.machine.type}, {spec.machine.accelerators}"
    machine += f", × {counted(spec.replica_count, 'replica')}" if spec.replica_count > 1 else ""
    cost = spec.cost_per_hour if Capability.BILLED in backend.facts.capabilities else None
    print_kv(
        console,
        f"cloudtrain · {spec.job_name}",
        [
            (
                "backend",
                f"{spec.backend}: {backend.words.title}, following the {spec.cloud} contract"
                if local
                else spec.backend,
            ),
            ("region", None if local else spec.region),
            (
                "project",
                spec.project + (f" (from {spec.project_source})" if spec.project_source else "")
                if spec.project and not local
                else None,
            ),
            (
                "machine",
                f"{counted(spec.replica_count, 'process', 'processes')} here; in the cloud: {machine}"
                if local
                else machine,
            ),
            (
                "image",
                None
                if local or spec.container
                else f"none: TensorFlow {spec.tensorflow_version} in a Python environment built for the job"
                if Capability.BUILDS_ENVIRONMENT in backend.facts.capabilities  # no image runs: its TF version counts
                else spec.image_uri
                + (
                    f" (TensorFlow {spec.tensorflow_version}, the newest image: the default)"
                    if "image.tensorflow" in spec.defaults
                    else ""
                )
                + (f"; TensorFlow {replaced[1]} runs ({replaced[0]} in the package)" if replaced else ""),
            ),
            (
                "package",
                f"{package.filename} ({package.size:,} bytes, sha256 {package.sha256[:12]})"
                if package
                else "none: your own container runs as it is, nothing is uploaded",
            ),
            ("left out", left_out(package) if package else None),
            ("metadata", package.metadata if package else None),
            ("requires", ", ".join(package.requirements) or None if package else None),
            _run_row(spec),
            ("secrets", ", ".join(f"{name} ← {ref}" for name, ref in spec.secrets.items()) or None),
            *((f"data {name}", line) for name, line in describe(spec).items()),
            ("output", spec.output_dir + (" (the job dir, as given)" if spec.job_dir == spec.output_dir else "")),
            (
                "staging",
                None if local or not spec.package_prefix or not package else f"{spec.package_prefix}/{package.sha256}/",
            ),
            ("spot", "yes" if spec.spot else None),
            *spec.backend_settings.summary_rows(),
            ("sweep", _sweep_line(spec.sweep)),
            ("batch", _batch_line(spec)),
            ("resume", f"{spec.resume.job_id}: {spec.resume.checkpoint_dir}" if spec.resume else None),
            *_cost_rows(spec, cost),
        ],
    )
    for note in spec.notes:
        console.print(f"[yellow]mapped:[/yellow] {escape(note.removeprefix('mapped: '))}")


def _cost_rows(spec: JobSpec, cost: float | None) -> list[tuple[str, str | None]]:
    """The price of an hour (where the backend bills), the budget's estimate and cap, the default runtime."""
    return [
        (
            "cost/hour",
            None
            if cost is None
            else f"{money(cost)} for {_machines(spec)} ({spec.machine.price_region} "
            f"{price_basis(spec)}, {spec.machine.price_date}"
            + (
                f"; the job runs in {spec.region}, whose price may differ)"
                if spec.region != spec.machine.price_region
                else ")"
            ),
        ),
        (
            "estimate",
            None
            if cost is None or not spec.expected_hours
            else _per_trial(spec, cost * spec.expected_hours)
            + f" for {duration(spec.expected_hours * 3600)} (budget.max_hours × cost/hour)",
        ),
        ("cost cap", None if cost is None else _cost_cap(spec)),
        (
            "max runtime",
            f"{duration(spec.max_runtime_seconds)} (default)"
            if cost is None and "max_runtime" in spec.defaults
            else None,
        ),
    ]


def _cost_cap(spec: JobSpec) -> str | None:
    """Every replica running until max_runtime: the budget's cap when ``budget.max_usd`` cut it."""
    if spec.max_cost is None:  # no price for its machine
        return None
    cap, span = _per_trial(spec, spec.max_cost), duration(spec.max_runtime_seconds)
    if spec.budget_usd:
        return f"{cap}: max_runtime {span}, cut to fit budget.max_usd {money(spec.budget_usd)}"
    default = ", the default" if "max_runtime" in spec.defaults else ""
    return f"{cap} if it runs until max_runtime ({span}{default})"


def _machines(spec: JobSpec) -> str:
    """What the hourly price pays for: ``1 × n1-standard-16 + 4 × T4`` (GPUs attached to the machine),
    ``1 × ml.g4dn.12xlarge (4 × T4)`` (GPUs built in), ``2 × (n1-standard-16 + 4 × T4)``."""
    m = spec.machine
    if not m.accelerator_count or m.tpu_cores or not m.gpu_model:
        return f"{spec.replica_count} × {m.type}"
    gpus = f"{m.accelerator_count} × {m.gpu_model}"
    if built_in_gpus(spec.cloud, m.type):
        return f"{spec.replica_count} × {m.type} ({gpus})"
    one = f"{m.type} + {gpus}"
    return f"1 × {one}" if spec.replica_count == 1 else f"{spec.replica_count} × ({one})"


def _per_trial(spec: JobSpec, usd: float) -> str:
    """A job's amount; a sweep's per trial and for all its trials (each trial is one such job)."""
    if spec.sweep is None:
        return money(usd)
    trials = spec.sweep.max_trials
    return f"{money(usd)} per trial, {money(usd * trials)} for the sweep's {counted(trials, 'trial')}"


def _batch_line(spec: JobSpec) -> str | None:
    """The global batch: per replica × replicas (printed again when a fallback changes the GPU count)."""
    per_replica = next(
        (int(m[1]) for a in spec.module_args() if (m := re.fullmatch(r"--batch[-_]size=(\d+)", a))), None
    )
    replicas = spec.machine.replicas_per_machine * spec.replica_count
    if per_replica is None or Capability.RUNS_HERE in get_backend(spec.backend).facts.capabilities:
        return None
    unit = "TPU cores" if spec.machine.tpu_cores else "GPUs × machines"
    return f"global {per_replica * replicas} = {per_replica} per replica × {counted(replicas, 'replica')} ({unit})"


def _sweep_line(sweep: Sweep | None) -> str | None:
    if sweep is None:
        return None
    params = ", ".join(sweep.params)
    return (
        f"{sweep.goal} {sweep.metric} over {params}: {counted(sweep.max_trials, 'trial')}, "
        f"{sweep.parallel_trials} at a time, {sweep.algorithm}" + (", early stopping" if sweep.early_stopping else "")
    )


def _run_row(spec: JobSpec) -> tuple[str, str]:
    """What the job runs; a script's ``--model_dir`` value depends on where it runs."""
    if spec.container:  # ENTRYPOINT: the image's own, when no command is given
        command = " ".join(shlex.quote(c) for c in spec.container.command) or "ENTRYPOINT"
        args = " ".join(shlex.quote(a) for a in mask_args(spec.module_args()))
        return "container", f"{spec.container.image_uri}: {command} {args}".rstrip()
    if spec.package.script:  # secret-named options and credentials show as *** (--dry-run's request shows them too)
        args = " ".join(shlex.quote(a) for a in mask_args(spec.script_args("MODEL_DIR")))
        return "script", f"python {spec.package.script} {args}".rstrip() + f"  (in {spec.package.path})"
    return "module", f"python -m {spec.package.module} {' '.join(mask_args(spec.module_args()))}".rstrip()
