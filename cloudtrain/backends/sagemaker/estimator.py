"""A SageMaker ``TensorFlow(...)`` estimator and its ``fit(...)`` call → a cloudtrain config.

The user's Python is read with :mod:`ast`, never run, and bounded (:data:`MAX_ESTIMATOR_BYTES`, what Python's
parser and a 64-bit integer hold), so a hostile file cannot hang it. Each value is checked for what it becomes
(paths stay in the estimator's folder, regions, roles and scripts are what those allow, no control characters);
a literal argument (or a name bound to one) becomes its config key, a computed one (``get_execution_role()``) is
listed for the user, with a placeholder only where the config needs one; arguments with no counterpart are listed.

=========================  =======================================================
estimator argument         config key
=========================  =======================================================
entry_point, source_dir    package.script, package.path (the source folder)
role                       role_arn (an ARN; a bare role name is listed)
instance_type / _count     machine.type / replica_count
framework_version          image.tensorflow (same TF DLC image as the SDK picks)
py_version, image_uri      image.python (py310 → "3.10"), image.uri
hyperparameters            hyperparameters (reach the script as --name value)
distribution               distribution
model_dir                  model_dir (False → false; a path is listed)
output_path                output_dir (its bucket also becomes staging_bucket)
base_job_name              name
max_run                    max_runtime
use_spot_instances         spot.enabled; max_wait → spot.max_wait
volume_size                machine.disk_gb
environment, tags          env, labels
fit(inputs)                data (a string is the ``training`` channel)
=========================  ======================================================="""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml

from cloudtrain.errors import ConfigError
from cloudtrain.packaging.script import SCRIPT_PATH
from cloudtrain.text import FILL_IN, counted

#: The largest estimator file ``init`` reads (a notebook's launch cell is a few KiB).
MAX_ESTIMATOR_BYTES = 1 << 20
#: The largest whole number a value may be (``max_run=24 * 60 * 60``): products past it are not literals.
_MAX_INT = 2**63 - 1
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")
_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}")

DEFAULT_REGION = "us-east-1"
PLACEHOLDER_MARK = FILL_IN
PLACEHOLDER_BUCKET = f"s3://{PLACEHOLDER_MARK}-BUCKET"
PLACEHOLDER_ROLE = f"arn:aws:iam::000000000000:role/{PLACEHOLDER_MARK}"
_SIMPLE = {
    "instance_count": ("replica_count",),
    "instance_type": ("machine", "type"),
    "framework_version": ("image", "tensorflow"),
    "py_version": ("image", "python"),
    "image_uri": ("image", "uri"),
    "hyperparameters": ("hyperparameters",),
    "distribution": ("distribution",),
    "output_path": ("output_dir",),
    "max_run": ("max_runtime",),
    "use_spot_instances": ("spot", "enabled"),
    "max_wait": ("spot", "max_wait"),
    "volume_size": ("machine", "disk_gb"),
    "environment": ("env",),
}
_OWN = ("entry_point", "source_dir", "role", "model_dir", "tags", "base_job_name")  # translated below
_KEY_OF = {k: ".".join(v) for k, v in _SIMPLE.items()} | {
    "role": "role_arn",
    "entry_point": "package.script",
    "source_dir": "package.path",
    "base_job_name": "name",
}
_ORDER = tuple(
    "name backend region role_arn staging_bucket output_dir machine replica_count package image hyperparameters "
    "model_dir distribution data".split()
)
_NOT_TRANSLATED = {
    "checkpoint_s3_uri": "cloudtrain keeps spot checkpoints next to the job's output",
    "checkpoint_local_path": "the script finds its checkpoint folder in SAGEMAKER_BASE_DIR / the contract",
    "sagemaker_session": "the region and credentials come from the config and the usual AWS settings",
    "metric_definitions": "cloudtrain reads metrics from the job's logs itself",
    "subnets": "VPC settings are not supported yet",
    "security_group_ids": "VPC settings are not supported yet",
    "code_location": "cloudtrain uploads the source folder under staging_bucket",
    "dependencies": "put the files in the source folder, or requirements in requirements.txt",
    "git_config": "check the repository out and point package.path at it",
    "script_mode": "always script mode",
}


@dataclass
class Translation:
    """The config (key order as written), what to fill in, and what was left out; one line each."""

    config: dict[str, Any]
    fill_in: list[str] = field(default_factory=list)
    not_translated: list[str] = field(default_factory=list)
    line: int = 0  # where the estimator is
    done: list[str] = field(default_factory=list)  # what init made of it: each fit input's channel, the package
    entry_alone: str | None = None  # no source_dir: SageMaker uploads this entry point alone (the package's only file)


class _NotLiteral(Exception):
    pass


def translate_estimator(source: str, filename: str = "<estimator>") -> Translation:
    """Translate the first ``TensorFlow(...)`` call of ``source`` and its estimator's ``fit(...)``."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise ConfigError(f"not valid Python: {exc.msg}", file=filename, line=exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL byte; nesting past what the parser holds
        raise ConfigError(f"not Python cloudtrain can read: {type(exc).__name__}", file=filename) from None
    constants = _constants(tree)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) == "TensorFlow"]
    if not calls:
        raise ConfigError(
            "no TensorFlow(...) estimator call found",
            file=filename,
            hint="pass the Python file that creates the SageMaker TensorFlow estimator",
        )
    call = min(calls, key=lambda c: (c.lineno, c.col_offset))
    out = Translation(config={}, line=call.lineno)
    if len(calls) > 1:
        out.not_translated.append(
            f"{counted(len(calls) - 1, 'more TensorFlow(...) call')} after line {call.lineno}: "
            "translate them one file at a time"
        )
    args = {k.arg: k.value for k in call.keywords if k.arg}
    if any(k.arg is None for k in call.keywords):
        out.fill_in.append(f"TensorFlow(**…) at line {call.lineno}: the unpacked arguments are not read")
    values: dict[str, Any] = {}
    for name, node in args.items():
        try:
            values[name] = _literal(node, constants)
        except _NotLiteral:
            if name in _SIMPLE or name in _OWN:
                out.fill_in.append(
                    f"{name}={ast.unparse(node)} (line {node.lineno}) is not a literal: "
                    f"set {_KEY_OF.get(name, name)} yourself"
                )
    cfg = out.config
    cfg["name"] = _job_name(values.get("base_job_name"), values.get("entry_point"))
    cfg["backend"] = "sagemaker"
    cfg["region"] = _region(tree, constants) or DEFAULT_REGION
    if cfg["region"] == DEFAULT_REGION and not _region(tree, constants):
        out.fill_in.append(f"region: the estimator does not say (its session does); {DEFAULT_REGION} was written")
    _role(values, args, cfg, out)
    _package(values, args, cfg, out)
    for name, path in _SIMPLE.items():
        if name in values:
            value = values[name]
            if name == "framework_version":
                value = str(value)
            if name == "py_version" and isinstance(value, str):  # the SDK's py310 is the config's "3.10"
                value = re.sub(r"^py(\d)(\d+)$", r"\1.\2", value)
            if name == "hyperparameters":
                value = _scalars(value, out)
            _put(cfg, path, value)
    if "model_dir" in values:
        if values["model_dir"] is False:
            cfg["model_dir"] = False
        else:
            out.not_translated.append(
                f"model_dir={values['model_dir']!r}: cloudtrain passes each backend's own "
                "--model_dir (SageMaker: OUTPUT/JOB/model)"
            )
    if isinstance(values.get("tags"), list):
        cfg["labels"] = {t["Key"]: t["Value"] for t in values["tags"] if isinstance(t, dict) and "Key" in t}
    if values.get("instance_type") in ("local", "local_gpu"):
        out.fill_in.append(
            "instance_type='local' is SageMaker local mode: set machine.type to a real instance type "
            "and run with cloudtrain submit --local"
        )
    _fit(tree, call, constants, cfg, out)
    _staging_bucket(cfg, out)
    _checked(cfg, out)
    out.config = {k: cfg[k] for k in _ORDER if k in cfg} | {k: v for k, v in cfg.items() if k not in _ORDER}
    for name in args:
        if name in _NOT_TRANSLATED:
            out.not_translated.append(f"{name}: {_NOT_TRANSLATED[name]}")
        elif name not in _SIMPLE and name not in _OWN:
            out.not_translated.append(f"{name}: no cloudtrain setting")
    return out


# --- the estimator's arguments -------------------------------------------------------------


def _role(values: dict[str, Any], args: dict[str, ast.expr], cfg: dict[str, Any], out: Translation) -> None:
    role = values.get("role")
    if isinstance(role, str) and role.startswith("arn:"):
        cfg["role_arn"] = role
        return
    cfg["role_arn"] = PLACEHOLDER_ROLE
    if isinstance(role, str):
        out.fill_in.append(f"role_arn: role={role!r} is a role name; write its ARN, arn:aws:iam::<account>:role/{role}")
    elif "role" not in args:
        out.fill_in.append("role_arn: the estimator has no role; write the SageMaker execution role's ARN")


def _package(values: dict[str, Any], args: dict[str, ast.expr], cfg: dict[str, Any], out: Translation) -> None:
    entry = values.get("entry_point")
    source_dir = values.get("source_dir")
    if not isinstance(entry, str):
        entry = "train.py"
        if "entry_point" not in args:
            out.fill_in.append("package.script: the estimator has no entry_point; train.py was written")
    if isinstance(source_dir, str):
        if source_dir.startswith("s3://"):
            out.fill_in.append(f"package.path: source_dir={source_dir!r} is in S3; download it and point at the folder")
            source_dir = "."
        cfg["package"] = {"path": source_dir, "script": entry}
    else:  # no source_dir: the SDK uploads the entry point alone; its folder holds the package, an ignore file the rest
        path = PurePosixPath(entry)
        cfg["package"] = {"path": str(path.parent), "script": path.name}
        out.entry_alone = path.name


def _scalars(hyperparameters: Any, out: Translation) -> dict[str, Any]:
    if not isinstance(hyperparameters, dict):
        out.fill_in.append("hyperparameters: not a mapping; write them as name: value")
        return {}
    kept = {}
    for key, value in hyperparameters.items():
        if isinstance(value, (bool, int, float, str)):
            kept[str(key)] = value
        else:
            out.fill_in.append(
                f"hyperparameters.{key}: {value!r} is not a single value; SageMaker would pass "
                "its JSON text — write it as a string"
            )
    return kept


def _job_name(base: Any, entry: Any) -> str:
    raw = base if isinstance(base, str) else PurePosixPath(entry).stem if isinstance(entry, str) else "tf-script"
    name = re.sub(r"[^a-z0-9-]+", "-", raw.lower()).strip("-")
    name = name if name[:1].isalpha() else f"job-{name}".rstrip("-")
    return name[:40].rstrip("-") or "tf-script"


def _staging_bucket(cfg: dict[str, Any], out: Translation) -> None:
    """The bucket of output_path; else of the first s3:// data channel (to check); else a placeholder."""
    channels = [v if isinstance(v, str) else v.get("source") for v in cfg.get("data", {}).values()]
    for sources, sure in (([cfg.get("output_dir")], True), (channels, False)):
        bucket = next(
            (s.split("/")[2] for s in sources if isinstance(s, str) and s.startswith("s3://") and s[5:]), None
        )
        if bucket:
            cfg["staging_bucket"] = f"s3://{bucket}"
            if not sure:
                out.fill_in.append(
                    f"staging_bucket: s3://{bucket} is the data's bucket; check that you may "
                    "write there (the source folder is uploaded to it)"
                )
            return
    cfg["staging_bucket"] = PLACEHOLDER_BUCKET
    out.fill_in.append(
        "staging_bucket: no literal s3:// location to take it from; write the bucket cloudtrain "
        "may upload the source folder to"
    )


def _checked(cfg: dict[str, Any], out: Translation) -> None:
    """Each value as what it becomes (a path, a region, a role, a script), else a placeholder to fill in."""
    package = cfg.get("package") or {}
    path = str(package.get("path", "."))
    if PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts or _CONTROL.search(path):
        out.fill_in.append(f"package.path: {path!r} is outside the estimator's folder; '.' was written")
        package["path"] = "."
    script = str(package.get("script", ""))
    if not SCRIPT_PATH.fullmatch(script) or ".." in PurePosixPath(script).parts or not script.endswith(".py"):
        out.fill_in.append(
            f"package.script: {script!r} is not a .py file inside the source folder; train.py was written"
        )
        package["script"] = "train.py"
    if not _REGION.fullmatch(str(cfg.get("region", ""))):
        out.fill_in.append(f"region: {cfg.get('region')!r} is not a region name; {DEFAULT_REGION} was written")
        cfg["region"] = DEFAULT_REGION
    if cfg.get("role_arn") != PLACEHOLDER_ROLE and not _ROLE_ARN.fullmatch(str(cfg.get("role_arn"))):
        out.fill_in.append("role_arn: the role given is not an IAM role ARN; write the execution role's ARN")
        cfg["role_arn"] = PLACEHOLDER_ROLE
    for key in list(cfg):
        if _has_control(cfg[key]):
            out.fill_in.append(f"{key}: a value has a control character (a newline, …) and was left out")
            del cfg[key]


def _has_control(value: Any) -> bool:
    if isinstance(value, str):
        return bool(_CONTROL.search(value))
    if isinstance(value, dict):
        return any(_has_control(k) or _has_control(v) for k, v in value.items())
    if isinstance(value, list):
        return any(map(_has_control, value))
    return False


# --- fit(...) --------------------------------------------------------------------------------


def _fit(tree: ast.Module, call: ast.Call, constants: dict[str, Any], cfg: dict[str, Any], out: Translation) -> None:
    owner = _assigned_name(tree, call)
    fits = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "fit"
        and (owner is None or _name(n.func.value) == owner)
    ]
    if not fits:
        return
    fit = min(fits, key=lambda c: c.lineno)
    node = fit.args[0] if fit.args else next((k.value for k in fit.keywords if k.arg == "inputs"), None)
    if node is None:
        return
    if isinstance(node, ast.Dict):  # each channel on its own: the literal ones are kept
        entries: list[tuple[ast.expr | None, ast.expr]] = [
            (k, v) for k, v in zip(node.keys, node.values, strict=True) if k is not None
        ]
    else:
        entries = [(None, node)]
    inputs = {}
    for key, value in entries:
        where = ast.unparse(value) if key is None else f"{ast.unparse(key)}: {ast.unparse(value)}"
        name: Any = "training"  # fit("s3://…") is SageMaker's `training` channel (SM_CHANNEL_TRAINING)
        try:
            name = name if key is None else _literal(key, constants)
            inputs[name] = _inputs(value, constants) if key is None else {name: _channel(value, constants)}
            out.done += [
                f"data.{n}: fit input {where} (line {value.lineno}) is the {n} channel (SM_CHANNEL_{n.upper()})"
                for n in inputs[name]
            ]
        except _NotLiteral:
            named = isinstance(name, str) and name.isidentifier()
            out.fill_in.append(
                f"fit input {where} (line {value.lineno}) is not a literal: "
                + (f"it is the {name} channel; add it as data.{name}: s3://…" if named else "add it under data:")
            )
    inputs = {k: v for group in inputs.values() for k, v in group.items()}
    data = {}
    for name, channel in inputs.items():
        if isinstance(channel, dict) and channel.get("input_mode") == "Pipe":
            out.not_translated.append(f"data.{name}: input_mode Pipe; cloudtrain offers File and FastFile (File used)")
            channel = {k: v for k, v in channel.items() if k != "input_mode"}
        data[name] = channel["source"] if isinstance(channel, dict) and set(channel) == {"source"} else channel
    cfg["data"] = data


def _inputs(node: ast.expr, constants: dict[str, Any]) -> dict[str, Any]:
    """``'s3://…'``, a name bound to a dict of those, or ``TrainingInput(…)`` → channels."""
    if isinstance(node, ast.Name) and node.id in constants and isinstance(constants[node.id], dict):
        return {k: {"source": v} if isinstance(v, str) else v for k, v in constants[node.id].items()}
    return {"training": _channel(node, constants)}


def _channel(node: ast.expr, constants: dict[str, Any]) -> dict[str, Any]:
    if isinstance(node, ast.Call) and _name(node.func) in ("TrainingInput", "s3_input"):
        kwargs = {k.arg: _literal(k.value, constants) for k in node.keywords if k.arg}
        source = _literal(node.args[0], constants) if node.args else kwargs.get("s3_data")
        channel = {"source": source}
        if kwargs.get("distribution"):
            channel["distribution"] = kwargs["distribution"]
        if kwargs.get("input_mode"):
            channel["input_mode"] = kwargs["input_mode"]
        if not isinstance(source, str):
            raise _NotLiteral
        return channel
    value = _literal(node, constants)
    if not isinstance(value, str):
        raise _NotLiteral
    return {"source": value}


# --- reading Python ----------------------------------------------------------------------------


def _constants(tree: ast.Module) -> dict[str, Any]:
    """Names bound once to a literal anywhere in the file (``role = "arn:…"``); rebound names are left out."""
    seen: dict[str, Any] = {}
    twice: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            try:
                value = _literal(node.value, seen)
            except _NotLiteral:
                twice.add(name)
                continue
            if name in seen:
                twice.add(name)
            seen[name] = value
    return {k: v for k, v in seen.items() if k not in twice}


def _literal(node: ast.expr, constants: dict[str, Any]) -> Any:
    try:
        return _value(node, constants)
    except RecursionError:  # nesting deeper than Python's stack: not a value a config takes
        raise _NotLiteral from None


def _value(node: ast.expr, constants: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral
        return {
            _literal(k, constants): _literal(v, constants)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None  # none is (checked above): narrows the type
        }
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e, constants) for e in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):  # max_run=24 * 60 * 60
        left, right = _literal(node.left, constants), _literal(node.right, constants)
        if isinstance(left, int) and isinstance(right, int) and abs(left) <= _MAX_INT and abs(right) <= _MAX_INT:
            product = left * right  # both fit 64 bits, so this is quick; a product past it is no setting
            if abs(product) <= _MAX_INT:
                return product
        raise _NotLiteral
    if isinstance(node, ast.JoinedStr) or isinstance(node, ast.Call):
        raise _NotLiteral
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _NotLiteral from None


def _name(node: ast.expr) -> str | None:
    """``TensorFlow`` for ``TensorFlow``, ``sagemaker.tensorflow.TensorFlow`` and ``tf_est``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _assigned_name(tree: ast.Module, call: ast.Call) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and node.value is call and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
    return None


def _region(tree: ast.Module, constants: dict[str, Any]) -> str | None:
    """A literal ``region_name=`` anywhere (``boto3.Session(region_name="eu-west-1")``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "region_name":
            try:
                value = _literal(node.value, constants)
            except _NotLiteral:
                continue
            if isinstance(value, str):
                return value
    return None


def _put(cfg: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for part in path[:-1]:
        cfg = cfg.setdefault(part, {})
    cfg[path[-1]] = value


def to_yaml(translation: Translation, source_name: str) -> str:
    """The config file: what to fill in and what was left out as comments on top, then the keys."""
    name = _CONTROL.sub("?", source_name)  # a comment line stays one line: a newline there would be a key
    lines = [f"# From the TensorFlow estimator in {name} (line {translation.line}), by cloudtrain init."]
    if translation.fill_in:
        lines.append("# Fill in before submitting:")
        lines += [f"#   - {_CONTROL.sub('?', item)}" for item in translation.fill_in]
    for title, items in (("Not translated", translation.not_translated), ("Translated", translation.done)):
        lines += [f"# {title}:"] * bool(items) + [f"#   - {_CONTROL.sub('?', item)}" for item in items]
    body = yaml.safe_dump(translation.config, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return "\n".join(lines) + "\n" + body
