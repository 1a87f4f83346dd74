import gc
import threading
from collections.abc import Iterator

import pytest

from hrsync.gcpause import collector_paused


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_off_inside_and_back_on_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_comes_back_when_the_block_raises() -> None:
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("bad export")
    assert gc.isenabled()


def test_as_a_decorator_it_pauses_each_call() -> None:
    @collector_paused()
    def build() -> bool:
        return gc.isenabled()

    assert build() is False
    assert build() is False
    assert gc.isenabled()


def test_a_nested_pause_leaves_the_collector_off_until_the_outer_one_ends() -> None:
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_application_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads_switch_it_back_on_once_both_end() -> None:
    # The other thread's pause begins first and ends first; ours must stay paused until
    # it ends, and then the collector must be on (not left as our start found it).
    other_in = threading.Event()
    ours_in = threading.Event()

    def other() -> None:
        with collector_paused():
            other_in.set()
            ours_in.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    assert other_in.wait(5)
    with collector_paused():
        ours_in.set()
        thread.join(5)
        assert not gc.isenabled()
    assert gc.isenabled()
