#!/usr/bin/env python3
"""Plays systemd's side of Type=notify for a real exporter process.

Usage: notify_probe.py EXPORTER [ARGS...]
Binds a unix datagram socket, starts EXPORTER with NOTIFY_SOCKET and WATCHDOG_USEC=2s (as systemd
does for WatchdogSec=2s), and asserts: READY=1 within 20 s, then WATCHDOG=1 within the watchdog
timeout, then after SIGTERM STOPPING=1 and a clean exit. Prints what it received; exit 1 on failure.
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

WATCHDOG_USEC = 2_000_000


def receive_until(sock, want, deadline_s, proc):
    """Returns the first datagram whose lines include `want`, polling until the deadline."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        # An exporter that sent its last datagram and exited leaves it queued: read what is
        # queued before calling its exit a failure.
        exited = proc.poll() is not None
        sock.settimeout(0 if exited else max(0.05, min(0.5, end - time.monotonic())))
        try:
            data = sock.recv(4096).decode()
        except (socket.timeout, BlockingIOError):
            if exited:
                raise AssertionError(f"exporter exited with {proc.returncode} while waiting for {want}")
            continue
        print(f"received: {data!r}")
        if want in data.split("\n"):
            return data
    raise AssertionError(f"no {want} within {deadline_s}s")


def main():
    exe, args = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC=str(WATCHDOG_USEC))
        env.pop("WATCHDOG_PID", None)
        proc = subprocess.Popen([exe, *args], env=env)
        try:
            receive_until(sock, "READY=1", 20, proc)
            receive_until(sock, "WATCHDOG=1", WATCHDOG_USEC / 1e6, proc)
            proc.terminate()
            receive_until(sock, "STOPPING=1", 10, proc)
            rc = proc.wait(timeout=15)
            if rc != 0:
                raise AssertionError(f"exporter exited with {rc} after SIGTERM")
        except AssertionError as e:
            print(f"notify probe: {e}", file=sys.stderr)
            return 1
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print("notify probe: READY=1, WATCHDOG=1 and STOPPING=1 received in order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
