"""Command-line flags of ``python -m trainer.task``. No TensorFlow here.

SageMaker hands hyperparameters over twice: as ``--key value`` arguments and as
the ``SM_HPS`` JSON. Both are accepted: ``SM_HPS`` values act as defaults that
explicit arguments override. ``--snake_case`` spellings are accepted for every
flag, as SageMaker and Vertex hyperparameter tuning write them.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Mapping, Sequence

from trainer import precision, schedule, strategy
from trainer.env import parse_json_env
from trainer.errors import TrainerError

MODELS = ("cnn", "resnet50")  # trainer.models.MODELS, kept here so --help needs no TensorFlow
OPTIMIZERS = ("adam", "sgd", "rmsprop")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m trainer.task",
        description="Train (or benchmark) a Keras model with the tf.distribute strategy and precision "
        "that fit this machine; prints a plan, one JSON line per epoch, and exports the model.",
    )
    g = p.add_argument_group("data and model")
    g.add_argument(
        "--data",
        help="digits (default, offline), mnist, synthetic, or a path to .npz / TFRecord "
        "files / a directory (local, gs://, s3://). Default: the platform's training channel, else digits",
    )
    g.add_argument(
        "--val-data",
        help="validation data path (default: the platform's validation channel, "
        "the file's test arrays, or --val-split of the training data)",
    )
    g.add_argument("--val-split", type=float, default=0.2, help="fraction held out for validation (default 0.2)")
    g.add_argument("--model", choices=MODELS, default="cnn")
    g.add_argument("--cnn-width", type=int, default=32, help="filters in the CNN's first block (default 32)")
    g.add_argument("--input-shape", help="synthetic data image shape, e.g. 28,28,1 (default: per model)")
    g.add_argument("--num-classes", type=int, help="synthetic data classes (default: per model)")
    g.add_argument("--synthetic-examples", type=int, default=2048, help="size of --data synthetic (default 2048)")
    g.add_argument("--no-cache", action="store_true", help="do not cache the decoded dataset in memory")
    g.add_argument("--shuffle-buffer", type=int, default=10_000)

    g = p.add_argument_group("training")
    g.add_argument("--epochs", type=int, default=12)
    g.add_argument("--batch-size", type=int, default=32, help="per replica; global = this x replicas (default 32)")
    g.add_argument("--lr", type=float, default=0.003, help="learning rate for one replica (default 0.003, for Adam)")
    g.add_argument("--no-lr-scaling", action="store_true", help="do not multiply --lr by the replica count")
    g.add_argument("--lr-schedule", choices=schedule.SCHEDULES, default="cosine")
    g.add_argument("--warmup-epochs", type=int, default=0)
    g.add_argument("--optimizer", choices=OPTIMIZERS, default="adam")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--steps-per-epoch", type=int, help="cap on steps per epoch (default: one pass over the data)")
    g.add_argument(
        "--steps-per-execution",
        type=_steps_per_execution,
        default=None,
        metavar="N|auto",
        help="steps per tf.function call (default auto: as many as take about --call-seconds; "
        "a preemption notice is acted on between calls)",
    )
    g.add_argument(
        "--call-seconds",
        type=float,
        default=1.0,
        help="target duration of one tf.function call with --steps-per-execution auto (default 1)",
    )
    g.add_argument(
        "--no-preemption-handler",
        action="store_true",
        help="no checkpoint on SIGTERM or a preemption notice (SIGTERM then ends the run unsaved); "
        "the trainer bench measures what the handler costs against this",
    )

    g = p.add_argument_group("devices")
    g.add_argument("--strategy", choices=strategy.CHOICES, default="auto")
    g.add_argument("--precision", choices=precision.CHOICES, default="auto")
    g.add_argument(
        "--tpu-rules",
        action="store_true",
        help="apply the TPU rules (bfloat16, static shapes, fixed steps per call) with any strategy: "
        "how they are tested on a CPU; on by itself under --strategy tpu",
    )
    g.add_argument(
        "--cpu-devices",
        type=int,
        default=1,
        help="split the CPU into N logical devices (tests MirroredStrategy without GPUs)",
    )

    g = p.add_argument_group("outputs (flags override the platform's variables)")
    g.add_argument("--job-dir", help="base for model/, checkpoints/, logs/ (as on Cloud ML Engine)")
    g.add_argument("--model-dir")
    g.add_argument("--checkpoint-dir")
    g.add_argument("--tensorboard-dir")
    g.add_argument("--output-dir", help="extra copy of metrics.json (SageMaker: SM_OUTPUT_DATA_DIR)")
    g.add_argument("--checkpoint-every", type=int, default=1, help="epochs between checkpoints (default 1)")
    g.add_argument("--no-resume", action="store_true", help="ignore existing checkpoints and start at epoch 1")

    g = p.add_argument_group("modes")
    g.add_argument(
        "--benchmark",
        action="store_true",
        help="fixed steps on synthetic data; report examples/s for this strategy and precision",
    )
    g.add_argument("--benchmark-steps", type=int, default=50)
    g.add_argument("--warmup-steps", type=int, default=5, help="benchmark steps run before timing")
    g.add_argument("--plan-only", action="store_true", help="print the plan and exit without training")
    g.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _steps_per_execution(value: str) -> int | None:
    if value.strip().lower() == "auto":
        return None
    try:
        steps = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of steps or 'auto', got {value!r}") from None
    if steps < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {steps}")
    return steps


def _normalise(argv: Sequence[str]) -> list[str]:
    out = []
    for token in argv:
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            token = name.replace("_", "-") + eq + value
        out.append(token)
    return out


#: Hyperparameters SageMaker's container and cloudtrain's launcher use themselves.
RESERVED_HP_PREFIXES = ("sagemaker_", "cloudtrain_", "_")


def hps_to_argv(hps: Mapping[str, object], parser: argparse.ArgumentParser, warn=None) -> list[str]:
    """SM_HPS entries as arguments; unknown keys are reported and skipped."""
    warn = warn or (lambda msg: print(f"WARNING: {msg}", file=sys.stderr))
    actions = {opt: a for a in parser._actions for opt in a.option_strings}
    argv: list[str] = []
    for key, value in hps.items():
        if str(key).startswith(RESERVED_HP_PREFIXES):
            continue  # the container's and cloudtrain's launcher settings, not trainer flags
        option = "--" + str(key).replace("_", "-")
        action = actions.get(option)
        if action is None:
            close = difflib.get_close_matches(option, list(actions), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            warn(f"SM_HPS key {key!r} is not a trainer flag; ignored{hint}")
            continue
        if isinstance(action, argparse._StoreTrueAction):
            if str(value).strip().lower() in ("true", "1", "yes"):
                argv.append(option)
        else:
            argv += [option, str(value)]
    return argv


def parse_args(argv: Sequence[str], environ: Mapping[str, str]) -> argparse.Namespace:
    parser = build_parser()
    hps = parse_json_env(environ, "SM_HPS", {})
    if not isinstance(hps, dict):
        raise TrainerError("SM_HPS must be a JSON object")
    args = parser.parse_args(hps_to_argv(hps, parser) + _normalise(argv))
    for name in ("epochs", "batch_size", "checkpoint_every", "benchmark_steps", "synthetic_examples"):
        if getattr(args, name) < 1:
            raise TrainerError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.input_shape:
        try:
            args.input_shape = tuple(int(d) for d in args.input_shape.split(","))
        except ValueError:
            raise TrainerError(f"--input-shape {args.input_shape!r}: expected integers like 28,28,1") from None
        if len(args.input_shape) != 3 or min(args.input_shape) < 1:
            raise TrainerError(f"--input-shape needs height,width,channels, got {args.input_shape}")
    return args
