"""no_interrupts: the few assignments that record a decision in two places
(a sharded edit's commit and the model's new state) cannot be split by Ctrl-C."""

import signal
import threading

import pytest

from skforget._utils import no_interrupts


def test_no_interrupts_delivers_ctrl_c_after_the_block():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with no_interrupts():
            signal.raise_signal(signal.SIGINT)
            done.append("the block ran to its end")
    assert done == ["the block ran to its end"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # Elsewhere than the main thread it does nothing (signals go to the main one).
    ran = []
    thread = threading.Thread(target=lambda: ran.append(no_interrupts().__enter__()))
    thread.start()
    thread.join()
    assert ran == [None]
