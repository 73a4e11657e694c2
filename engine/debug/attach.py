"""Whether this machine lets debugpy attach to a running Python process (gdb code injection)."""

from __future__ import annotations

import shutil
import subprocess

from engine.errors import EngineError


class AdapterMissing(EngineError):
    code = "adapter_missing"


def check_pid_injection(pid: int) -> None:
    """debugpy attaches to a pid by injecting code with gdb (an inferior call through ptrace).
    Some machines (VMs and sandboxes) refuse the register writes that needs, and the failed call
    kills the target; so a throwaway process is probed first and the attach refused when it fails."""
    gdb = shutil.which("gdb")
    if gdb is None:
        raise AdapterMissing(f"--attach {pid}: debugpy attaches through gdb, which is not installed",
                             hint="apt-get install gdb   (or start the program under the debugger: debug start)")
    probe = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        out = subprocess.run([gdb, "--nx", "--nh", "--batch", "-p", str(probe.pid), "-ex", "call (int)getpid()"],
                             capture_output=True, text=True, timeout=30, check=False, stdin=subprocess.DEVNULL)
        survived = probe.poll() is None
    finally:
        probe.kill()
        probe.wait()
    if f"= {probe.pid}" not in out.stdout or not survived:
        why = next((line for line in (out.stdout + out.stderr).splitlines() if "Couldn't" in line or "ptrace" in line),
                   "gdb could not call a function in a probe process")
        raise EngineError(f"--attach {pid}: this machine does not allow code injection into a running Python "
                          f"process ({why.strip()}); the process was left untouched",
                          hint="start the program under the debugger instead: framework debug start <service|path>",
                          code="attach_unsupported")
