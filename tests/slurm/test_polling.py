"""How often a Slurm watcher asks the controller: backoff while nothing changes, slower on a slow cluster."""

from __future__ import annotations

import random

from cloudtrain.backends.slurm.polling import STEADY_S, ControllerPoll
from cloudtrain.backoff import Backoff


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def calls_in(seconds: float, poll: ControllerPoll, clock: Clock, *, took_s: float = 0.05, step: float = 0.2) -> int:
    calls = 0
    end = clock.now + seconds
    while clock.now < end:
        if poll.due():
            calls += 1
            poll.asked("RUNNING", took_s)
        clock.now += step
    return calls


def make(clock: Clock, seed: int) -> ControllerPoll:
    return ControllerPoll(
        clock=clock, backoff=Backoff(initial=1.0, cap=STEADY_S, factor=2.0, spread=(0.8, 1.0), rng=random.Random(seed))
    )


def test_a_steady_job_costs_at_most_ten_controller_calls_a_minute():
    for seed in range(5):
        clock = Clock()
        poll = make(clock, seed)
        calls_in(60, poll, clock)  # the first minute backs off from 1 s
        assert calls_in(600, poll, clock) <= 10 * 10


def test_a_slow_controller_slows_the_polling():
    clock = Clock()
    poll = make(clock, 1)
    calls_in(60, poll, clock)
    fast = calls_in(600, poll, clock, took_s=0.05)
    slow = calls_in(600, poll, clock, took_s=3.0)  # 3 s an answer: asked again 30 s later at the soonest
    assert slow <= 600 / 30 + 1 < fast


def test_a_change_or_the_end_asks_again_soon():
    clock = Clock()
    poll = make(clock, 2)
    calls_in(120, poll, clock)
    poll.asked("COMPLETING", 0.05)  # a new state: the next call after about FIRST_S, not STEADY_S
    assert poll.wait_s() <= 1.0
    poll.asked("COMPLETING", 0.05)
    poll.now()
    assert poll.due()
