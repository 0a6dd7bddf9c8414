"""Imports point one way: no circle anywhere in cloudtrain/ or bench/, and no module imports one on
a higher floor (entry points → app layer → backends → core). Read from the source with ``ast``."""

from __future__ import annotations

from tests.architecture.import_graph import climbs, cycles, graph


def test_no_import_cycles_in_cloudtrain_or_bench() -> None:
    assert cycles(graph("cloudtrain", "bench")) == []


def test_no_module_imports_a_higher_floor() -> None:
    assert climbs(graph("cloudtrain", "bench")) == []


def test_the_checks_see_a_cycle_and_a_climb() -> None:
    """The checks themselves: a made-up graph with a circle and an upward import is caught."""
    edges = {
        "cloudtrain.spec": {"cloudtrain.app.launch": 3},
        "cloudtrain.app.launch": {"cloudtrain.spec": 1},
        "cloudtrain.sweeps.params": {"cloudtrain.backends.vertex": 7},
    }
    assert cycles(edges) == [["cloudtrain.app.launch", "cloudtrain.spec"]]
    assert climbs(edges) == [
        "cloudtrain.spec:3 -> cloudtrain.app.launch",
        "cloudtrain.sweeps.params:7 -> cloudtrain.backends.vertex",
    ]
