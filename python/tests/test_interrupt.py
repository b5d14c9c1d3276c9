"""Ctrl-C during a release: the release stops at its next stopping point and
``KeyboardInterrupt`` says whether the budget was charged; a spend recorded in a ledger
before the interrupt stays recorded.

The interrupt is sent from the release's own progress callback (on one of the release's
threads) at a chosen event, which then waits: the release cannot pass the next stopping
point before the main thread, polling every 50 ms, has seen the signal — so each test is
deterministic, and fast (the release stops seconds before it would have finished).
"""

from __future__ import annotations

import _thread
import json
import signal
import time
from pathlib import Path

import pytest

import dpqr
from conftest import SURVEY_CSV, SURVEY_SCHEMA, run_cli

#: adaptive-projection on the survey's 2-way tables: rounds to interrupt.
RELEASE = dict(
    schema=str(SURVEY_SCHEMA), ignore_extra_columns=True, workload="all-2way",
    mechanism="adaptive-projection", epsilon=1.0, delta=1e-6, rows=100,
)


def interrupter(kind: str, message_start: str = "", send=_thread.interrupt_main):
    """A progress callable that sends the interrupt (``send``) at the first event of
    ``kind`` whose message starts with ``message_start``, then holds the release there for
    0.5 s; ``seen`` lists the kinds of the events it received."""
    seen = []

    def on_event(kind_: str, message: str, done, total) -> None:
        seen.append(kind_)
        if kind_ == kind and message.startswith(message_start) and "sent" not in seen:
            seen.append("sent")
            send()
            time.sleep(0.5)

    on_event.seen = seen  # type: ignore[attr-defined]
    return on_event


@pytest.fixture(autouse=True)
def sigint_raises_keyboard_interrupt():
    """Python's own SIGINT handler for each test: a runner started in the background of a
    non-interactive shell inherits SIGINT ignored, and then neither ``interrupt_main`` nor
    ``raise_signal`` reaches Python (docs/python.md, "Interrupting a release (Ctrl-C)")."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture()
def ledger(cli, tmp_path) -> Path:
    path = tmp_path / "ledger.json"
    result = run_cli(cli, ["ledger", "init", str(path), "--epsilon", "10", "--delta", "1e-5",
                           "--neighbouring", "add-remove", "--dataset", "survey"])
    assert result.returncode == 0, result.stderr
    return path


def spends(ledger: Path) -> list:
    """The spends the ledger records for the dataset ``survey``."""
    return json.loads(ledger.read_text())["datasets"]["survey"]["spends"]


def test_ctrl_c_during_the_rounds_stops_and_keeps_the_charge(ledger):
    assert spends(ledger) == []
    on_event = interrupter("round")
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as raised:
        dpqr.release(str(SURVEY_CSV), ledger=ledger, ledger_dataset="survey",
                     progress=on_event, **RELEASE)
    seconds = time.monotonic() - start
    message = str(raised.value)
    assert message.startswith("dpqr.release interrupted before the release finished"), message
    assert f"the budget WAS CHARGED: ledger {ledger} records" in message
    assert "for dataset 'survey'" in message
    assert "never refunded" in message
    # the spend recorded before the first noise stays in the ledger
    recorded = spends(ledger)
    assert len(recorded) == 1, recorded
    # no round after the one that sent the interrupt
    rounds_after = on_event.seen[on_event.seen.index("sent") + 1:]
    assert "round" not in rounds_after, on_event.seen
    assert seconds < 10, seconds
    # the release without an interrupt finishes: the rounds went on well past the first
    full = []
    dpqr.release(str(SURVEY_CSV), progress=lambda k, *_: full.append(k), **RELEASE)
    assert full.count("round") > 2, full
    # the ledger's own reading of the spend left
    assert len(spends(ledger)) == 1


def test_ctrl_c_before_the_charge_charges_nothing(ledger):
    before = ledger.read_text()
    # SIGINT itself, raised on the release's thread while it loads the data
    on_event = interrupter("stage", "loading data",
                           send=lambda: signal.raise_signal(signal.SIGINT))
    with pytest.raises(KeyboardInterrupt) as raised:
        dpqr.release(str(SURVEY_CSV), ledger=ledger, ledger_dataset="survey",
                     progress=on_event, **RELEASE)
    assert str(raised.value) == (
        "dpqr.release interrupted before the release finished: nothing was returned or "
        f"kept; the budget was NOT charged: nothing was recorded in ledger {ledger}")
    assert ledger.read_text() == before
    assert "round" not in on_event.seen


def test_ctrl_c_without_a_ledger_says_nothing_was_recorded():
    with pytest.raises(KeyboardInterrupt) as raised:
        dpqr.release(str(SURVEY_CSV), progress=interrupter("round"), **RELEASE)
    assert str(raised.value).endswith(
        "the budget was NOT charged: no ledger= was given, so no spend was recorded anywhere")
    # the interrupt was raised by Python's handler, and is the cause
    assert isinstance(raised.value.__cause__, KeyboardInterrupt)
