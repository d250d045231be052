"""The executable half of a forked ``cli_path`` (tests/forked_cli.py): it hands what to
run (agent-tui, or a Python script using the agent's code), its command line,
environment, folder and stdin, stdout and stderr to the test worker's fork service,
which forks it from a server that has the agent imported; it passes on the signals it
gets (TERM, INT, HUP), and leaves with the exit code (or the signal) of what ran. If it
dies, the service kills the process group of what it ran.

Usage: python -I -S forked_cli_launcher.py SOCKET agent-tui|SCRIPT [arguments...]
Standard library only, and little of it: this is the part every run pays for.
"""

import json
import os
import signal
import socket
import sys


def main() -> None:
    service = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    service.connect(sys.argv[1])
    body = json.dumps({"target": sys.argv[2], "argv": sys.argv[3:], "env": dict(os.environ),
                       "cwd": os.getcwd()}).encode()
    socket.send_fds(service, [len(body).to_bytes(8, "big")], [0, 1, 2])
    service.sendall(body)
    quiet = os.open(os.devnull, os.O_RDWR)  # the agent holds stdin and stdout now
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)

    def relay(signum: int, _frame: object) -> None:
        service.sendall(json.dumps({"signal": signum}).encode() + b"\n")

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, relay)
    replies = service.makefile("rb")
    for line in replies:
        reply = json.loads(line)
        if "exit" in reply:
            code = reply["exit"]
            if code < 0:  # ended by a signal: so is this process
                signal.signal(-code, signal.SIG_DFL)
                os.kill(os.getpid(), -code)
            sys.exit(code)
    sys.exit("forked agent: the fork service went away")


main()
