"""Ctrl-C held from a backend's create call until the job is recorded (cloudtrain.creation_window)."""

from __future__ import annotations

import os
import signal

import pytest

from cloudtrain import creation_window


def test_an_interrupt_after_hold_is_kept_until_the_window_closes():
    recorded = []
    with creation_window.window() as held:
        creation_window.hold()  # the backend: sbatch is next
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, right after the job exists
        recorded.append("job 42")  # the app layer records it: not cut short
    assert recorded == ["job 42"] and held.caught == [signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_an_interrupt_before_hold_unwinds_at_once():
    with pytest.raises(KeyboardInterrupt), creation_window.window() as held:
        os.kill(os.getpid(), signal.SIGINT)  # nothing created yet
        pytest.fail("not reached")
    assert held.caught == []


def test_hold_outside_a_window_holds_nothing():
    creation_window.hold()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
