"""``python -m dashboard serve`` (also ``bandit-dashboard serve``): serve a whole class.

One command for an instructor, on :func:`panel.serve` with the options ``panel serve`` has:
the address and port, the websocket origins students' browsers come from, ``--num-procs``,
an optional class password and an optional instructor password (both checked by
:class:`dashboard.ui.auth.ClassAuthProvider`, with a login rate limit), and where simulations
run:

* default: an embedded Dask ``LocalCluster`` sized to the machine, started here before the
  server and shared by every session (with ``--num-procs`` the server processes share it too:
  its address is handed to them through :data:`~dashboard.simulation.engine.ENV_SCHEDULER`);
* ``--scheduler tcp://host:8786``: a cluster the instructor already runs (``dask scheduler``
  and ``dask worker tcp://host:8786`` on every machine that should help);
* ``--in-process``: no Dask, every run in the server process (one user, a laptop).

It also serves ``/instructor`` (the links students type with a QR code, sessions, runs
computing, the workers' load: only with the instructor password, or from the server machine
itself), ``/sweep`` (the Sweep view on the same Dask client) and ``/play`` ("can you beat
AROQ?").  The server is the one ``panel serve dashboard`` gives (:mod:`dashboard.ui.server`):
links up to :data:`~dashboard.ui.server.MAX_HEADER_BYTES` load, and Panel's ``/components/``
route imports nothing a URL names (:mod:`dashboard.ui.routes`).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from typing import Any

__all__ = ["ENGINE_ENV", "MAX_WORK_ENV", "add_parser", "serve"]

#: ``dask`` or ``in-process``: where served sessions run their simulations (read by
#: :func:`dashboard.ui.model.default_engine`).
ENGINE_ENV = "BANDIT_DASHBOARD_ENGINE"
#: Per-run work limit (estimated seconds of simulation) an instructor sets for the class; read
#: by :func:`dashboard.ui.model.class_max_work`.
MAX_WORK_ENV = "BANDIT_DASHBOARD_MAX_WORK"


def _port(text: str) -> int:
    try:
        v = int(text) if len(text) < 7 and text.isascii() and "_" not in text else -1
    except ValueError:
        v = -1
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"port must be a whole number from 0 to 65535: {text!r}")
    return v


def _count(low: int, high: int):
    def parse(text: str) -> int:
        try:
            v = int(text) if len(text) < 12 and text.isascii() and "_" not in text else -1
        except ValueError:
            v = -1
        if not low <= v <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from {low} to {high}")
        return v

    return parse


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand to the CLI's subparsers."""
    p = subparsers.add_parser(
        "serve",
        help="serve the dashboard to a class (Dask-backed simulations, optional password)",
        description=(
            "Serve the dashboard (and /instructor) for a class. Simulations run on an "
            "embedded Dask cluster by default, on --scheduler ADDRESS, or --in-process."
        ),
    )
    p.add_argument("--address", default="127.0.0.1", help="listen address (0.0.0.0 for a LAN)")
    p.add_argument("--port", type=_port, default=5006, help="port (default 5006)")
    p.add_argument(
        "--allow-websocket-origin",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="host name students type in their browser (repeatable), e.g. 192.168.1.20:5006",
    )
    p.add_argument(
        "--num-procs", type=_count(1, 64), default=1, help="server processes (default 1)"
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="Dask scheduler address, tcp://HOST:8786")
    where.add_argument(
        "--in-process", action="store_true", help="run simulations in the server process"
    )
    p.add_argument(
        "--workers",
        type=_count(1, 256),
        help="embedded cluster's worker processes (default: cores)",
    )
    p.add_argument(
        "--max-work",
        type=_count(1, 86_400),
        help="largest run a student may start, in estimated seconds of simulation "
        "(default 600; see bandit-dashboard docs LIMITS)",
    )
    p.add_argument(
        "--idle-minutes",
        type=_count(1, 24 * 60),
        help="release a student's run (paused or finished) after this many minutes without a "
        "button press (default 10); a closed page's run is released within seconds",
    )
    p.add_argument(
        "--password-file",
        help="file holding the class password (every page but /instructor); keep it out of the "
        "shell history",
    )
    p.add_argument(
        "--instructor-password-file",
        help="file holding the instructor's password for /instructor (without it /instructor "
        "opens only on the server machine itself)",
    )
    p.add_argument("--show", action="store_true", help="open a browser on the server machine")
    from .cli_args import add_plugin_flag

    add_plugin_flag(p)  # your own policies/shifts, for every session (and every Dask worker)
    p.set_defaults(func=_cmd_serve)
    return p


def _read_password(path: str | None) -> str | None:
    if path is None:
        return None
    p = Path(path)
    if not p.is_file() or p.stat().st_size > 4096:
        raise ValueError(f"password file {path!r} must be a small text file")
    text = p.read_text(errors="strict").strip()
    if len(text) < 4 or "\n" in text:
        raise ValueError("the password file must hold one line of at least 4 characters")
    return text


def _cmd_serve(args: argparse.Namespace) -> int:
    from .cli_args import load_plugins

    load_plugins(args.plugin)
    password = _read_password(args.password_file)
    instructor_password = _read_password(args.instructor_password_file)
    if instructor_password is not None and instructor_password == password:
        raise ValueError("the instructor password file must hold another password than the class's")
    serve(
        address=args.address,
        port=args.port,
        websocket_origin=args.allow_websocket_origin or None,
        num_procs=args.num_procs,
        scheduler=args.scheduler,
        in_process=args.in_process,
        workers=args.workers,
        max_work=args.max_work,
        idle_minutes=args.idle_minutes,
        password=password,
        instructor_password=instructor_password,
        show=args.show,
    )
    return 0


def prepare_engine(
    scheduler: str | None = None,
    in_process: bool = False,
    workers: int | None = None,
    max_work: int | None = None,
    idle_minutes: int | None = None,
) -> dict[str, str]:
    """Settle where sessions run and export it to this process's environment (inherited by
    ``--num-procs`` children).  Starts the embedded cluster now, so the first student does not
    wait for it.  Returns the variables set."""
    from .simulation.engine import ENV_SCHEDULER, check_address, get_client

    env: dict[str, str] = {}
    if in_process:
        env[ENGINE_ENV] = "in-process"
    else:
        env[ENGINE_ENV] = "dask"
        addr = scheduler or os.environ.get(ENV_SCHEDULER) or None
        if addr:
            check_address(addr)
        client = get_client(scheduler=addr, workers=workers)
        env[ENV_SCHEDULER] = addr or client.scheduler.address
        warm_workers(client)
    if max_work is not None:
        env[MAX_WORK_ENV] = str(int(max_work))
    if idle_minutes is not None:
        from .ui.lifecycle import IDLE_ENV

        env[IDLE_ENV] = str(int(idle_minutes))
    os.environ.update(env)
    return env


def _dashboard_page() -> Any:
    """One student's page: the app, with its run released when the page closes or idles."""
    from .ui.app import create_app
    from .ui.lifecycle import watch_session

    template = create_app()
    watch_session(template.app)
    return template


def _warm() -> bool:
    """Import the simulation stack and run one tiny frame (numpy, scipy, the policies'
    modules): a student's first Run otherwise pays the worker's cold imports (seconds)."""
    from .simulation.remote import RunRequest, SimulationActor
    from .simulation.specs import make_spec

    actor = SimulationActor(RunRequest(make_spec("cmab", d=4, m=2), ("CUCB",), 20, 1, 0))
    actor.advance(20, 0.01)
    actor.close()
    return True


def warm_workers(client: Any) -> None:
    """Warm every worker of ``client`` (see :func:`_warm`) in the background: the server
    starts at once and the workers import while the first pages load."""
    try:
        from distributed import fire_and_forget

        for addr in client.scheduler_info().get("workers", {}):
            fire_and_forget(client.submit(_warm, workers=[addr], pure=False, priority=10))
    except Exception:  # a worker that cannot warm up only costs its first student a moment
        pass


def _log_to_terminal() -> None:
    """The dashboard's own INFO lines (e.g. "busy server: ...") reach the instructor's terminal
    (the root logger would drop them)."""
    import logging

    log = logging.getLogger("dashboard")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)


#: The interpreter's thread switch interval while serving (seconds; Python's default is 5 ms).
#: The pages' event loop shares the interpreter lock with the Dask client's thread, which
#: receives the class's frames.  Each socket write of the loop releases the lock, and the loop
#: then waited for the client's thread to give it back: up to the switch interval, each time
#: (py-spy at 30 students: 15% of the loop's time sat in the socket writes of frames and of
#: ``call_soon_threadsafe``).  0.5 ms: 1.72 -> 1.84 frames/s per student and Pause p95
#: 258 -> 188 ms in the classroom benchmark, single classes of 30 run back to back.
LOOP_SWITCH_INTERVAL = 0.0005


def serve(
    address: str = "127.0.0.1",
    port: int = 5006,
    websocket_origin: list[str] | None = None,
    num_procs: int = 1,
    scheduler: str | None = None,
    in_process: bool = False,
    workers: int | None = None,
    max_work: int | None = None,
    idle_minutes: int | None = None,
    password: str | None = None,
    show: bool = False,
    start: bool = True,
    instructor_password: str | None = None,
    login_throttle: Any = None,
) -> Any:
    """Serve ``/dashboard`` (the app, one per session) and ``/instructor``.

    ``password`` guards every page but ``/instructor``; ``instructor_password`` guards
    ``/instructor`` (without it only the server machine opens it); ``login_throttle`` (a
    :class:`~dashboard.ui.auth.LoginThrottle`) bounds failed logins per client.  Returns the
    server (``start=False`` leaves it to the caller, as tests do).
    """
    import panel as pn

    from .shutdown import quiet_workers, run_until_stopped
    from .simulation import store
    from .ui.auth import ClassAuthProvider
    from .ui.instructor import LISTEN_ENV, ORIGINS_ENV, create_instructor_page, tracked
    from .ui.pages import create_play_page, create_sweep_page
    from .ui.routes import guard_routes
    from .ui.server import MAX_HEADER_BYTES

    guard_routes()  # before the server exists: no request meets the open route

    with quiet_workers():  # Ctrl-C reaches the cluster's workers only through it
        prepare_engine(scheduler, in_process, workers, max_work, idle_minutes)
    _log_to_terminal()
    sys.setswitchinterval(LOOP_SWITCH_INTERVAL)  # (see LOOP_SWITCH_INTERVAL)
    origins = list(websocket_origin or [])
    os.environ[LISTEN_ENV] = f"{address}:{port}"
    os.environ[ORIGINS_ENV] = ",".join(origins)
    if not origins:
        origins = [f"{address}:{port}", f"localhost:{port}", f"127.0.0.1:{port}"]
    # always a provider: /instructor is refused to other machines even without passwords
    provider = ClassAuthProvider(password, instructor_password, login_throttle)
    return run_until_stopped(pn.serve, start)(  # SIGTERM/Ctrl-C stop it all
        {
            "dashboard": tracked("dashboard", _dashboard_page),
            "instructor": tracked("instructor", create_instructor_page),
            "sweep": tracked("sweep", create_sweep_page),
            "play": tracked("play", create_play_page),
        },
        address=address,
        port=port,
        websocket_origin=origins,
        num_procs=num_procs,
        show=show,
        start=start,
        title={
            "dashboard": "Bandit teaching dashboard",
            "instructor": "Instructor",
            "sweep": "Sweeps",
            "play": "Can you beat AROQ?",
        },
        # a closed page's session is discarded 15-20 s later (a page loading on a busy server
        # keeps its pre-built session that long); its run is released within ~2 s before
        # that by the session's reaper (dashboard/ui/lifecycle.py)
        unused_session_lifetime=15_000,
        check_unused_sessions=5_000,
        auth_provider=provider,
        cookie_secret=secrets.token_hex(32),
        # the link lengths `panel serve dashboard` accepts (dashboard/ui/server.py)
        http_server_kwargs={"max_header_size": MAX_HEADER_BYTES},
        # uploads: the websocket's own limit stays above the upload cap
        websocket_max_message_size=getattr(store, "WEBSOCKET_MAX_MESSAGE_BYTES", 64 * 2**20),
    )
