"""Check a (machine type, accelerator, count) against a cloud's table; name the nearest valid ones."""

from __future__ import annotations

import math
from collections.abc import Callable

from cloudtrain.catalog import cloud_facts, tpus
from cloudtrain.catalog.records import CatalogError, MachineInfo
from cloudtrain.catalog.suggest import did_you_mean
from cloudtrain.catalog.table import CloudTable, MachineType
from cloudtrain.catalog.table import table as table_of

_MAX_ALTERNATIVES = 4


def resolve(table: CloudTable, machine_type: str, accelerator: str | None, count: int | None) -> MachineInfo:
    t = table.types.get(machine_type)
    if t is None:
        raise _unknown_type(table, machine_type)
    count = count or 0
    if count < 0:
        raise CatalogError(f"accelerator_count must be 0 or more, received {count}", field="accelerator_count")
    if accelerator is not None and not accelerator.strip():
        accelerator = None
    if t.accelerator:
        return _built_in(table, t, accelerator, count)
    if not table.attachable(t):
        if accelerator or count:
            what = f"accelerator {accelerator}" if accelerator else f"accelerator_count {count}"
            raise CatalogError(
                f"{t.name} has no GPU; received {what}",
                _alternatives(table, t, _cloud_name(table, accelerator), count),
                field="accelerator" if accelerator else "accelerator_count",
            )
        return table.info(t, None, 0)
    return _attached(table, t, accelerator, count)


def _built_in(table: CloudTable, t: MachineType, accelerator: str | None, count: int) -> MachineInfo:
    """Accelerator and count are implied; when given they must match."""
    comes_with = f"{t.name} comes with {t.accelerator_count} × {t.accelerator}"
    if accelerator and t.accelerator not in table.accelerators_named(accelerator):
        raise CatalogError(
            f"{comes_with}; it cannot take accelerator {accelerator}",
            _alternatives(table, t, _cloud_name(table, accelerator), count or t.accelerator_count),
            field="accelerator",
        )
    if count and count != t.accelerator_count:
        raise CatalogError(
            f"{comes_with}; received accelerator_count {count}",
            _alternatives(table, t, t.accelerator, count),
            field="accelerator_count",
        )
    return table.info(t, t.accelerator, t.accelerator_count)


def _attached(table: CloudTable, t: MachineType, accelerator: str | None, count: int) -> MachineInfo:
    takes = table.attachable(t)
    if accelerator is None:
        if count:
            raise CatalogError(
                f"accelerator_count {count} needs an accelerator; {t.name} takes {', '.join(takes)}",
                _alternatives(table, t, None, count),
                field="accelerator",
            )
        return table.info(t, None, 0)
    name = _cloud_name(table, accelerator)
    if name not in takes:
        raise CatalogError(
            f"{t.name} cannot take accelerator {name}; {t.series} machine types take {', '.join(takes)}",
            _alternatives(table, t, name, count),
            field="accelerator",
        )
    allowed = table.allowed_counts(t, name)
    size = f"{t.name} ({t.vcpus} vCPUs, {t.memory_gb:g} GB)"
    if not allowed:
        roomiest = max(takes[name], key=lambda r: (r.max_vcpus, r.max_memory_gb))
        raise CatalogError(
            f"{size} is too big for {name}: {t.series} machine types take it with at most "
            f"{roomiest.max_vcpus} vCPUs and {roomiest.max_memory_gb:g} GB",
            _alternatives(table, t, name, count),
            field="machine_type",
        )
    shown = ", ".join(map(str, allowed))
    if not count:
        raise CatalogError(
            f"{t.name} with {name} needs an accelerator_count: {shown}",
            _alternatives(table, t, name, 1),
            field="accelerator_count",
        )
    if count not in allowed:
        rule = next((r for r in takes[name] if r.count == count), None)
        if rule is None:
            why = f"{name} comes in accelerator_count {', '.join(str(r.count) for r in takes[name])} on {t.series}"
        else:
            why = f"{count} × {name} needs at most {rule.max_vcpus} vCPUs and {rule.max_memory_gb:g} GB"
        raise CatalogError(
            f"{size} takes {name} with accelerator_count {shown}, received {count}; {why}",
            _alternatives(table, t, name, count),
            field="accelerator_count",
        )
    return table.info(t, name, count)


def _cloud_name(table: CloudTable, accelerator: str | None) -> str | None:
    """The cloud's own name for what the user typed; refuse names this cloud does not know."""
    if accelerator is None:
        return None
    found = table.accelerators_named(accelerator)
    if found:
        return found[0]
    raise CatalogError(
        f"unknown {table.cloud} accelerator {accelerator!r}; "
        f"{table.cloud} accelerators: {', '.join(table.accelerators)}",
        did_you_mean(accelerator, table.accelerators),
        field="accelerator",
    )


def _unknown_type(table: CloudTable, machine_type: str) -> CatalogError:
    if machine_type in table.refused:  # the cloud takes it; why cloudtrain does not, and what instead
        return CatalogError(f"{machine_type} is refused: {table.refused[machine_type]}", field="machine_type")
    message = f"unknown {table.cloud} machine type {machine_type!r}"
    for other in cloud_facts.names():
        if other != table.cloud and machine_type in table_of(other).types:
            message += f" ({machine_type} is a {other} machine type)"
    message += f"; `cloudtrain machines --backend {table.cloud}` lists the {len(table.types)} types"
    known = list(table.types) + (list(tpus.machine_types()) if table.cloud == cloud_facts.tpu_cloud() else [])
    return CatalogError(message, did_you_mean(machine_type, known), field="machine_type")


def _alternatives(table: CloudTable, t: MachineType, accelerator: str | None, count: int) -> list[str]:
    """The nearest valid combinations, trying in turn to keep GPU and count, machine, GPU, count."""
    want = count or 1
    gpu_rows = [m for m in table.combos if m.accelerator_count]
    series = {name: mt.series for name, mt in table.types.items()}
    picks: list[MachineInfo] = []

    def by_size(m: MachineInfo) -> tuple[float, float]:
        return abs(math.log2(m.vcpus) - math.log2(t.vcpus)), m.price_per_hour or math.inf

    def take(keep: Callable[[MachineInfo], bool], key: Callable[[MachineInfo], tuple[float, ...]], k: int = 1) -> None:
        fresh = [m for m in sorted(filter(keep, gpu_rows), key=key) if m not in picks]
        picks.extend(fresh[:k])

    if accelerator:
        take(
            lambda m: (
                m.accelerator == accelerator and m.accelerator_count == want and series[m.machine_type] == t.series
            ),
            by_size,
        )
        take(
            lambda m: m.accelerator == accelerator and m.machine_type == t.name,
            lambda m: (abs(m.accelerator_count - want), m.accelerator_count),
            k=2,
        )
        take(
            lambda m: (
                m.accelerator == accelerator and m.accelerator_count == want and series[m.machine_type] != t.series
            ),
            by_size,
        )
    take(lambda m: m.machine_type == t.name and m.accelerator_count == want, by_size)
    take(
        lambda m: m.accelerator_count == want and table.types[m.machine_type].accelerator is not None,
        lambda m: (m.price_per_hour or math.inf,),
    )
    return [table.describe(m) for m in picks[:_MAX_ALTERNATIVES]]
