"""The readers' child processes: a result comes down the pipe, and a stopped child is gone."""

import multiprocessing
import time

from profiler.child import start_child, stop_child


def _send_sum(send, a, b):
    send.send(a + b)


def _hang(send):
    time.sleep(60)


def test_a_child_sends_its_result_and_the_parent_holds_only_the_receiving_end():
    receive, child = start_child(multiprocessing.get_context("fork"), _send_sum, 2, 3)
    assert receive.poll(10) and receive.recv() == 5
    child.join(5)
    assert child.exitcode == 0 and child.daemon


def test_a_stopped_child_is_dead_and_its_pipe_closed():
    receive, child = start_child(multiprocessing.get_context("fork"), _hang)
    stop_child(child, receive)
    assert not child.is_alive() and receive.closed
