"""The readers' child processes: a result comes down the pipe, and a stopped child is gone."""

import multiprocessing
import os
import subprocess
import sys
import time

from profiler.child import start_child, stop_child
from tests.paths import ROOT


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


def test_a_spawned_child_starts_from_a_program_read_from_standard_input():
    """As `python - <<EOF ... roofline.load(run) ... EOF` reads an Nsight Compute install's report: a spawned child
    would run "<stdin>" again as its __main__ and die before the read."""
    program = (
        "import multiprocessing\n"
        "from profiler.child import start_child\n"
        "from tests.profiler.test_child import _send_sum\n"
        "receive, child = start_child(multiprocessing.get_context('spawn'), _send_sum, 40, 2)\n"
        "print('got', receive.recv() if receive.poll(60) else None)\n"
        "child.join(10)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-"], input=program, text=True, capture_output=True, cwd=ROOT, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "got 42", done.stdout + done.stderr
