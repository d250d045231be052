"""The sandbox: commands run under bubblewrap (``bwrap``), the kernel keeping them in.

With ``--sandbox`` (or settings ``sandbox.enabled``) every command the bash tool runs,
in the foreground or the background, starts as
``bwrap [mounts] --unshare-pid [--unshare-net] --die-with-parent -- bash -c ...``:

- the root file system is mounted read-only;
- the workspace is writable, and so are the ``sandbox.allowWrite`` paths;
- ``/tmp`` is a private, empty tmpfs (the workspace stays visible if it is under it,
  and so do, read-only, the folders of programs the commands find there: ``PATH``
  entries and this Python's prefixes that lie under ``/tmp``, such as a virtualenv);
- secrets under ``$HOME`` are hidden behind empty read-only folders: ``~/.ssh``,
  ``~/.aws``, ``~/.gnupg``, and the agent's own config and state (journals, keys);
- there is no network unless ``sandbox.network`` is ``allow`` (a new network namespace
  with only its own loopback: a listener of the host, even on 127.0.0.1, is out of
  reach);
- a PID namespace: when the command ends, the kernel ends everything it left there;
- every capability is dropped (``--cap-drop ALL``): root inside cannot remount what is
  read-only, mount anything, or reach past file permissions (what root can still do is
  in docs/security.md);
- ``/run`` (and ``/var/run``) is an empty read-only folder: the host's Unix sockets
  (Docker, D-Bus, systemd) are out of reach. Abstract Unix sockets belong to the network
  namespace, so they are out of reach whenever the network is;
- the agent's own guard files in the writable folders (``.claude/``, ``.agent-tui/``,
  ``.mcp.json``, ``.git/hooks`` and ``.git/config``, ``CLAUDE.md``, ``AGENTS.md``, found
  at any depth by a bounded walk: ``runtime/guard_sweep.py``) are bound read-only, and
  one a command creates is moved out of reach when it ends (the same module).

What the sandbox refused shows in the command's output as the system's error
("Read-only file system", "Connection refused", "Network is unreachable");
:func:`refusal_notes` words it for the model. When ``bwrap`` is missing or cannot run
(no user namespaces), :func:`probe` says why, and the session must not start:
nothing runs unsandboxed when the sandbox was asked for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agent_tui.containment_settings import Network
from agent_tui.runtime.guard_sweep import GuardBaseline, take_baseline

#: Under $HOME: folders of credentials no command needs to read.
SECRET_DIRS = (".ssh", ".aws", ".gnupg", ".docker", ".kube", ".config/gcloud", ".netrc")


class SandboxUnavailable(Exception):
    """The sandbox was asked for and cannot run here (the message says why)."""


class SandboxPolicy(BaseModel):
    """What a sandboxed command may do: write the workspace and ``allow_write``, reach
    the network if ``network`` is allow. ``hidden`` are shown empty and read-only."""

    model_config = ConfigDict(frozen=True)

    workspace: Path
    network: Network = Network.DENY
    allow_write: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()  # under /tmp, shown read-only through the private /tmp
    # False for plan mode's sandbox: the workspace too is read-only (:meth:`planning`).
    workspace_writable: bool = True

    def planning(self) -> SandboxPolicy:
        """Plan mode's sandbox: the same, but the workspace is read-only too, nothing
        else is writable but the private /tmp, and there is no network."""
        return self.model_copy(update={
            "workspace_writable": False, "allow_write": (), "network": Network.DENY})

    def with_added_dirs(self, added: tuple[Path, ...]) -> SandboxPolicy:
        """The same, with the folders added to the workspace (``--add-dir``) as the
        workspace is: writable, or (plan mode) shown read-only."""
        if not added:
            return self
        if self.workspace_writable:
            new = tuple(p for p in added if p not in self.allow_write)
            return self.model_copy(update={"allow_write": (*self.allow_write, *new)})
        return self.model_copy(update={"read_only": (*self.read_only, *added)})

    def describe(self) -> str:
        if not self.workspace_writable:
            return "read-only sandbox (bubblewrap): no writes but a private /tmp; no network"
        net = "network allowed" if self.network is Network.ALLOW else "no network"
        extra = f", also writable: {', '.join(map(str, self.allow_write))}" if self.allow_write else ""
        return f"sandbox on (bubblewrap): writes only in the workspace and a private /tmp{extra}; {net}"

    def writable_roots(self) -> list[Path]:
        """The folders a command may write (none in plan mode's sandbox)."""
        return [self.workspace, *self.allow_write] if self.workspace_writable else []

    def wrap(self, argv: list[str], cwd: Path, guards: GuardBaseline | None = None) -> list[str]:
        """``argv`` as bubblewrap runs it under this policy, in ``cwd``; ``guards`` the
        guard paths there now (walked here when not given)."""
        bwrap = shutil.which("bwrap") or "bwrap"
        out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--tmpfs", "/tmp"]
        for path in self.read_only:
            if path.exists():
                out += ["--ro-bind", str(path), str(path)]
        # Writable paths after /tmp, so a workspace under /tmp is still the real one.
        bind = "--bind" if self.workspace_writable else "--ro-bind"
        for path in (self.workspace, *self.allow_write):
            if path.exists():
                out += [bind, str(path), str(path)]
        if self.workspace_writable:  # the guards stay as the user left them
            found = guards if guards is not None else take_baseline(self.writable_roots())
            for path in found.bindable():  # -try: one gone since the walk is no error
                out += ["--ro-bind-try", str(path), str(path)]
        for path in self.hidden:
            if path.is_dir():
                out += ["--tmpfs", str(path), "--remount-ro", str(path)]
            elif path.exists():
                out += ["--ro-bind", "/dev/null", str(path)]
        out += _no_host_sockets(self.network)
        out += ["--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]
        if self.network is Network.DENY:
            out.append("--unshare-net")
        out += ["--chdir", str(cwd), "--", *argv]
        return out


def make_policy(
    workspace: Path, *, network: Network, allow_write: list[str], private: list[Path],
    home: Path | None = None, search_path: str | None = None,
) -> SandboxPolicy:
    """The policy for a session: ``private`` are the agent's own config and state
    folders (hidden like the secrets). ``allow_write`` may start with ``~``.
    ``search_path`` is the commands' ``PATH`` (default: the agent's)."""
    home = home or Path.home()
    writable = tuple(Path(p).expanduser().resolve() for p in allow_write)
    hidden = [home / d for d in SECRET_DIRS] + list(private)
    workspace = workspace.resolve()
    # Never hide the workspace or a path the user made writable.
    keep = [h.resolve() for h in hidden
            if not _contains(h.resolve(), workspace) and h.resolve() not in writable]
    path = os.environ.get("PATH", os.defpath) if search_path is None else search_path
    shown = [p for p in _programs_under_tmp(path)
             if not any(_contains(w, p) for w in (workspace, *writable))]
    return SandboxPolicy(workspace=workspace, network=network, allow_write=writable,
                         hidden=tuple(keep), read_only=tuple(shown))


def _no_host_sockets(network: Network) -> list[str]:
    """``/run`` (and a real ``/var/run``) empty and read-only; the resolver's file kept
    where ``/etc/resolv.conf`` points into ``/run`` and the network is allowed."""
    out = []
    for run in (Path("/run"), Path("/var/run")):
        if run.is_dir() and not run.is_symlink():
            out += ["--tmpfs", str(run)]
    resolv = Path("/etc/resolv.conf").resolve()
    if network is Network.ALLOW and _contains(Path("/run"), resolv) and resolv.is_file():
        out += ["--ro-bind", str(resolv), str(resolv)]
    for run in (Path("/run"), Path("/var/run")):
        if run.is_dir() and not run.is_symlink():
            out += ["--remount-ro", str(run)]
    return out


def _programs_under_tmp(search_path: str) -> list[Path]:
    """Folders the commands run programs from that the private ``/tmp`` would hide:
    ``PATH`` entries and this Python's prefixes (a virtualenv, its base) under ``/tmp``.
    ``/tmp`` itself never: that would undo the private one."""
    tmp = Path("/tmp")
    candidates = [Path(p) for p in search_path.split(os.pathsep) if p]
    candidates += [Path(sys.prefix), Path(sys.base_prefix)]
    found: list[Path] = []
    for candidate in candidates:
        try:
            real = candidate.resolve()
        except OSError:
            continue
        if real != tmp and _contains(tmp, real) and real.is_dir() and real not in found:
            found.append(real)
    return found


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def runs_here(policy: SandboxPolicy) -> bool:
    """Whether bubblewrap runs here with this policy (:func:`probe`, without a reason)."""
    try:
        probe(policy)
    except SandboxUnavailable:
        return False
    return True


def probe(policy: SandboxPolicy) -> None:
    """Check that bubblewrap runs here with this policy; raises SandboxUnavailable."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(
            "--sandbox needs bubblewrap (bwrap), which is not installed (Debian/Ubuntu: "
            "apt-get install bubblewrap); nothing was run")
    try:
        done = subprocess.run(
            policy.wrap(["true"], policy.workspace), stdin=subprocess.DEVNULL,
            capture_output=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"--sandbox: bubblewrap cannot run ({exc}); nothing was run") \
            from None
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
        raise SandboxUnavailable(
            f"--sandbox: bubblewrap cannot run here ({why}); user namespaces may be "
            "disabled. Nothing was run")


_WRITE_REFUSED = ("Read-only file system",)
_NET_REFUSED = ("Network is unreachable", "Connection refused", "Could not resolve host",
                "Temporary failure in name resolution", "Name or service not known",
                "No address associated with hostname")


def refusal_notes(policy: SandboxPolicy, output: str) -> list[str]:
    """Notes for the model when the output shows the sandbox refused something."""
    notes = []
    if not policy.workspace_writable:
        if any(marker in output for marker in _WRITE_REFUSED + _NET_REFUSED):
            notes.append(
                "[plan mode: commands run in a read-only sandbox (no writes but a private "
                "/tmp, no network). Present the plan with exit_plan_mode; changes come "
                "after the user approves it]")
        return notes
    if any(marker in output for marker in _WRITE_REFUSED):
        notes.append(
            "[sandbox: a write outside the workspace was refused (the file system is "
            "read-only there). Writable: the workspace, a private /tmp"
            + "".join(f", {p}" for p in policy.allow_write)
            + "; more needs sandbox.allowWrite in the user's settings]")
    if policy.network is Network.DENY and any(m in output for m in _NET_REFUSED):
        notes.append(
            "[sandbox: the command has no network (sandbox.network is deny), so a "
            "connection failed; even 127.0.0.1 is the sandbox's own, not the host's]")
    return notes
