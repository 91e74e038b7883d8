"""scripts/run-together, which `make run` uses to start the web server and a worker as one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "run-together"
SLEEPER = f"{sys.executable} -c 'import time; time.sleep(60)'"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _children(parent: int) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(parent)], capture_output=True, text=True
    )
    return [int(p) for p in out.stdout.split()]


def _started(process: subprocess.Popen[bytes], n: int) -> list[int]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pids = _children(process.pid)
        if len(pids) == n:
            return pids
        time.sleep(0.05)
    raise AssertionError("the commands did not start")


def _gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_ctrl_c_stops_every_command() -> None:
    process = subprocess.Popen([sys.executable, str(SCRIPT), SLEEPER, SLEEPER])
    pids = _started(process, 2)

    process.send_signal(signal.SIGINT)

    assert process.wait(timeout=20) == 0
    assert _gone(pids)


def test_when_one_command_dies_the_others_are_stopped_and_its_status_returned() -> None:
    quits = f"{sys.executable} -c 'import time, sys; time.sleep(0.5); sys.exit(3)'"
    process = subprocess.Popen([sys.executable, str(SCRIPT), SLEEPER, quits])
    pids = _started(process, 2)

    assert process.wait(timeout=20) == 3
    assert _gone(pids)
