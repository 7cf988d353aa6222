"""Benchmark: a whole class on one server (issue 13's "Must show").

Starts ``python -m dashboard serve`` (the Dask engine, its embedded local cluster) in a
subprocess on 127.0.0.1, then connects N simulated students.  A student is a real Bokeh
websocket session **without a browser**: it speaks the Bokeh protocol itself (the ``ACK``,
``PULL-DOC`` and ``PATCH-DOC`` messages BokehJS exchanges, framed by :mod:`bokeh.protocol`),
finds the Run and Pause buttons and the progress text in the pulled document by their CSS
classes (``run-button``, ``pause-button``, ``progress-text``), presses buttons by sending the
same ``button_click`` event a browser sends, and reads the server's document patches without
applying them to a document (so the clients cost the shared CPU as little as possible; a
browser renders, these only parse JSON).  Like the page's JavaScript, a student acknowledges
each numbered frame at once (``frame-sent`` -> ``frame-ack``, dashboard/ui/frame_ack.py; the
server sends a page at most two unacknowledged frames); ``--no-ack`` students never do.

Each student opens ``/dashboard?horizon=200000&runs=8&speed=normal`` (the cmab defaults
otherwise: d = 20, m = 3, CUCB, AROQ-CMAB and SROQ-CMAB), and for each class size N:

1. all N connect, then all press Run;
2. once every run showed its first frame (the time from Run to it is reported apart), for
   ``--seconds`` they just watch: a *frame* is a document patch whose progress text shows a
   new round ``t`` while running; frames/s of a session = its frames in the window divided by
   the time it was running in the window (a run that reaches T stops counting then);
3. each presses Pause ``--pauses`` times at random moments (Resume in between; a run that
   finished is started again first): the latency is the time from sending Pause to receiving
   the patch whose progress text says ``paused``;
4. all close their sockets: time to idle = until the server process and its children (the Dask
   workers) together are back to the idle server's own CPU use (measured before the first
   class: Dask heartbeats and the like) plus ``--idle-cpu`` percent of one core, for a whole
   second;
5. after ``--settle`` seconds (Bokeh discards closed sessions) the server's and the workers'
   resident memory are read; then a second class of N does the same (steps 1 to 5), and its
   memory after it left is compared with the first class's ("within 10% class-to-class").

Errors: lines with ``Traceback`` in the server's log (stdout and stderr) during the class, and
sessions whose progress text said ``error``.  The machine's load (``os.getloadavg``) is
recorded before each class: the other processes on the machine share its cores.

Usage::

    python benchmarks/bench_classroom.py --students 1,10,30 --seconds 20 --out table.md
    python benchmarks/bench_classroom.py --students 1,10 --format json

Every loop is bounded in count and time; the server (a new process group) is always killed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: The issue's targets (checked in the report).
TARGETS = {
    "pause_p95_ms_at_30": 300.0,
    "fps_each_at_30": 2.0,
    "fps_each_at_10": 5.0,
    "idle_s": 5.0,
    "rss_class_to_class": 0.10,
}

_PROGRESS = re.compile(r"t = ([\d,]+) / ([\d,]+).*?\((\w+)\)", re.S)
_DATA_KINDS = {"ColumnDataChanged", "ColumnsStreamed", "ColumnsPatched"}


# ---------------------------------------------------------------------------------- server
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m dashboard serve`` in its own process group, logging to a file."""

    def __init__(self, args: list[str], log_path: Path) -> None:
        self.port = _free_port()
        self.log_path = log_path
        # BENCH_EXTRA_PATH: a directory put before ours on the server's path (e.g. one with a
        # sitecustomize.py that counts or times something inside the server)
        path = [os.environ.get("BENCH_EXTRA_PATH", ""), str(ROOT)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
        env.pop("BANDIT_DASHBOARD_SCHEDULER", None)
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dashboard",
                "serve",
                "--address",
                "127.0.0.1",
                "--port",
                str(self.port),
                *args,
            ],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 300.0) -> float:
        """Seconds until the server listens and has served one page (the embedded cluster
        starts before the server listens; the first page imports the plotting stack)."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.proc.returncode}:\n{self.log()[-3000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        while time.monotonic() - start < timeout:
            left = timeout - (time.monotonic() - start)
            try:
                url = f"http://127.0.0.1:{self.port}/dashboard"
                with urllib.request.urlopen(url, timeout=max(left, 1.0)) as r:
                    if r.status == 200:
                        return time.monotonic() - start
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(1.0)
        raise TimeoutError(f"server not ready after {timeout:.0f} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def tracebacks(self) -> int:
        return self.log().count("Traceback")

    def processes(self) -> tuple[Any, list[Any]]:
        import psutil

        main = psutil.Process(self.proc.pid)
        try:
            children = main.children(recursive=True)
        except psutil.Error:
            children = []
        return main, children

    def rss_mb(self) -> tuple[float, float]:
        """Resident memory (MB) of the server process and of all its children (workers)."""
        import psutil

        main, children = self.processes()

        def rss(p: Any) -> float:
            try:
                return p.memory_info().rss / 2**20
            except psutil.Error:
                return 0.0

        return rss(main), sum(rss(c) for c in children)

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the server and its live children."""
        return sum(self.cpu_split())

    def cpu_split(self) -> tuple[float, float]:
        """CPU seconds used so far by the server process and by its live children (workers)."""
        import psutil

        main, children = self.processes()

        def cpu(p: Any) -> float:
            try:
                t = p.cpu_times()
                return t.user + t.system
            except psutil.Error:
                return 0.0

        return cpu(main), sum(cpu(c) for c in children)

    def stop(self) -> None:
        """Kill the server's process group (it holds the Dask cluster), always."""
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers (workers) of the group
        except (ProcessLookupError, PermissionError):
            pass
        self._log.close()


# --------------------------------------------------------------------------------- student
@dataclass
class Progress:
    at: float
    t: int
    horizon: int
    status: str


@dataclass
class Student:
    """One browser-less student: a Bokeh websocket session of ``/dashboard``."""

    port: int
    query: str
    index: int = 0
    ws: Any = None
    ids: dict[str, str] = field(default_factory=dict)
    progress: list[Progress] = field(default_factory=list)
    messages: int = 0
    data_messages: int = 0
    bytes_in: int = 0
    closed: bool = False
    error: str = ""
    no_ack: bool = False  # --no-ack: a client that never acknowledges frames
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: Any = None

    async def connect(self, timeout: float) -> None:
        from bokeh.client.websocket import WebSocketClientConnectionWrapper
        from bokeh.protocol import Protocol
        from bokeh.protocol.receiver import Receiver
        from bokeh.util.token import generate_jwt_token, generate_session_id
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        token = generate_jwt_token(generate_session_id())
        url = f"ws://127.0.0.1:{self.port}/dashboard/ws?{self.query}"
        req = HTTPRequest(
            url,
            headers={"Origin": f"http://127.0.0.1:{self.port}"},
            connect_timeout=timeout,
            request_timeout=timeout,
        )
        self.ws = await asyncio.wait_for(
            websocket_connect(req, subprotocols=["bokeh", token], max_message_size=2**28),
            timeout,
        )
        self._conn = WebSocketClientConnectionWrapper(self.ws)
        self._protocol = Protocol()
        self._receiver = Receiver(self._protocol)
        ack = await asyncio.wait_for(self._pop(), timeout)
        if ack is None or ack.msgtype != "ACK":
            raise RuntimeError(f"student {self.index}: no ACK ({ack and ack.msgtype})")
        await self._protocol.create("PULL-DOC-REQ").send(self._conn)
        reply = await asyncio.wait_for(self._pop_reply("PULL-DOC-REPLY"), timeout)
        if reply is None:
            raise RuntimeError(f"student {self.index}: no document")
        self.ids = _find_ids(reply.content["doc"])
        missing = {"run-button", "pause-button", "progress-text"} - set(self.ids)
        if missing:
            raise RuntimeError(f"student {self.index}: the page has no {sorted(missing)}")
        self._reader = asyncio.ensure_future(self._read())
        await self._send_event("document_ready", [])  # as BokehJS does once the page is drawn

    async def _send_event(self, name: str, entries: list[Any]) -> float:
        from bokeh.protocol.messages.patch_doc import patch_doc

        event = {
            "kind": "MessageSent",
            "msg_type": "bokeh_event",
            "msg_data": {
                "type": "event",
                "name": name,
                "values": {"type": "map", "entries": entries},
            },
        }
        msg = patch_doc(patch_doc.create_header(), {}, {"events": [event]})
        sent = time.monotonic()
        await msg.send(self._conn)
        return sent

    async def _pop_reply(self, msgtype: str) -> Any:
        """The next message of type ``msgtype`` (patches the server sent before it, e.g.
        from a periodic callback, are dropped: the pulled document already has them)."""
        while True:
            message = await self._pop()
            if message is None or message.msgtype == msgtype:
                return message

    async def _pop(self) -> Any:
        while True:
            fragment = await self.ws.read_message()
            if fragment is None:
                return None
            self.bytes_in += len(fragment)
            message = await self._receiver.consume(fragment)
            if message is not None:
                return message

    async def _read(self) -> None:
        try:
            while True:
                message = await self._pop()
                if message is None:
                    break
                if message.msgtype != "PATCH-DOC":
                    continue
                now = time.monotonic()
                self.messages += 1
                data = False
                frame = None
                for ev in message.content.get("events", []):
                    kind = ev.get("kind")
                    if (
                        kind == "ModelChanged"
                        and ev.get("attr") == "tags"
                        and (ev.get("model") or {}).get("id") == self.ids.get("frame-sent")
                    ):
                        frame = ev.get("new")
                    if kind in _DATA_KINDS or (kind == "ModelChanged" and ev.get("attr") == "data"):
                        data = True
                    elif (
                        kind == "ModelChanged"
                        and ev.get("attr") == "text"
                        and (ev.get("model") or {}).get("id") == self.ids["progress-text"]
                    ):
                        m = _PROGRESS.search(str(ev.get("new", "")))
                        if m:
                            t, T, status = m.groups()
                            self.progress.append(
                                Progress(
                                    now, int(t.replace(",", "")), int(T.replace(",", "")), status
                                )
                            )
                            if status == "error":
                                self.error = "the page showed an error"
                            self._changed.set()
                self.data_messages += data
                if frame is not None:
                    await self._acknowledge(frame)
        except Exception as exc:  # a closed socket ends the reader
            if not self.closed:
                self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.closed = True
            self._changed.set()

    async def _acknowledge(self, frame: Any) -> None:
        """Acknowledge a numbered frame as the page's JavaScript does once it drew it
        (dashboard/ui/frame_ack.py): ``frame-sent``'s tags ``[n]`` go to ``frame-ack``'s tags;
        the server sends a page at most a couple of frames it has not acknowledged."""
        from bokeh.protocol.messages.patch_doc import patch_doc

        if self.no_ack or "frame-ack" not in self.ids:
            return
        event = {
            "kind": "ModelChanged",
            "model": {"id": self.ids["frame-ack"]},
            "attr": "tags",
            "new": frame,
        }
        msg = patch_doc(patch_doc.create_header(), {}, {"events": [event]})
        await msg.send(self._conn)

    async def click(self, which: str) -> float:
        """Send a button's click (as BokehJS does); returns the monotonic send time."""
        return await self._send_event("button_click", [["model", {"id": self.ids[which]}]])

    @property
    def status(self) -> str:
        return self.progress[-1].status if self.progress else "ready"

    async def wait_for(self, status: str, after: float, timeout: float) -> float | None:
        """Receive time of the first progress with ``status`` received after ``after``."""
        stop = time.monotonic() + timeout
        while True:
            self._changed.clear()
            for p in reversed(self.progress):
                if p.at < after:
                    break
                if p.status == status:
                    first = p
                    for q in self.progress:
                        if q.at >= after and q.status == status:
                            first = q
                            break
                    return first.at
            left = stop - time.monotonic()
            if left <= 0 or self.closed:
                return None
            try:
                await asyncio.wait_for(self._changed.wait(), min(left, 1.0))
            except TimeoutError:
                pass

    async def wait_first_frame(self, after: float, timeout: float) -> None:
        """Wait (at most ``timeout``) for a progress with ``t > 0`` received after ``after``."""
        stop = time.monotonic() + timeout
        while self.first_frame(after) is None and not self.closed:
            left = stop - time.monotonic()
            if left <= 0:
                return
            self._changed.clear()
            if self.first_frame(after) is not None:
                return
            try:
                await asyncio.wait_for(self._changed.wait(), min(left, 1.0))
            except TimeoutError:
                pass

    def frames(self, start: float, end: float) -> tuple[int, float]:
        """Frames (a new t while running) received in ``[start, end]`` and the seconds of that
        window the run was running (it stops counting once the run reached T)."""
        n, last_t, stop = 0, None, end
        for p in self.progress:
            if p.at < start:
                last_t = p.t
                continue
            if p.at > end:
                break
            if p.status in ("running", "done") and p.t > (0 if last_t is None else last_t):
                n += 1
            last_t = p.t
            if p.status == "done":
                stop = min(stop, p.at)
                break
        return n, max(stop - start, 1e-9)

    def rounds(self, start: float, end: float) -> float:
        """Simulated rounds per second of running time in ``[start, end]`` (the run's
        progress as the page shows it: its progress text's ``t``)."""
        inside = [p for p in self.progress if start <= p.at <= end and p.t > 0]
        before = [p.t for p in self.progress if p.at < start]
        if not inside:
            return 0.0
        t0 = before[-1] if before else 0
        _, running = self.frames(start, end)
        return max(inside[-1].t - t0, 0) / running

    def first_frame(self, after: float) -> float | None:
        for p in self.progress:
            if p.at >= after and p.t > 0:
                return p.at - after
        return None

    async def close(self) -> None:
        self.closed = True
        if self.ws is not None:
            self.ws.close()
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (TimeoutError, Exception):
                self._reader.cancel()


def _find_ids(doc: dict[str, Any]) -> dict[str, str]:
    """Model ids of the controls, found by their CSS classes in the pulled document."""
    wanted = {"run-button", "pause-button", "progress-text", "frame-sent", "frame-ack"}
    found: dict[str, str] = {}
    stack: list[Any] = [doc]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            attrs = o.get("attributes")
            if "id" in o and isinstance(attrs, dict):
                for c in attrs.get("css_classes") or []:
                    if c in wanted and c not in found:
                        found[c] = o["id"]
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return found


# ----------------------------------------------------------------------------------- class
def _percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


async def _pause_cycles(
    student: Student, pauses: int, rng: random.Random, timeout: float
) -> list[float]:
    """``pauses`` times: (restart a finished run,) wait a little, Pause, wait for ``paused``,
    Resume.  Returns the latencies (seconds; ``inf`` when ``paused`` never came)."""
    out: list[float] = []
    for _ in range(pauses):
        if student.closed:
            break
        if student.status in ("done", "error", "ready"):
            sent = await student.click("run-button")
            if await student.wait_for("running", sent, timeout) is None:
                out.append(math.inf)
                continue
        await asyncio.sleep(rng.uniform(0.3, 1.2))
        if student.status != "running":  # finished meanwhile: try again next cycle
            continue
        sent = await student.click("pause-button")
        got = await student.wait_for("paused", sent, timeout)
        out.append(math.inf if got is None else got - sent)
        _trace_pause(student.ids.get("pause-button", "?"), sent, got)
        if got is not None:
            sent = await student.click("pause-button")  # Resume
            await student.wait_for("running", sent, timeout)
    return out


def _trace_pause(button: str, sent: float, got: float | None) -> None:
    """With ``BENCH_PAUSE_TRACE=FILE``: one line per Pause, ``button-id sent received``
    (``time.monotonic``, the clock a server-side trace on this machine reads too), to split a
    Pause's latency into its way to the server, the server's work and the way back."""
    where = os.environ.get("BENCH_PAUSE_TRACE")
    if where:
        with open(where, "a") as f:
            f.write(f"{button} {sent:.4f} {'nan' if got is None else f'{got:.4f}'}\n")


class LoopLag:
    """How late this process's event loop wakes (the students' side): when it lags, a
    patch the server already sent waits here, and Pause -> paused includes that wait."""

    def __init__(self, every: float = 0.05) -> None:
        self.every = every
        self.samples: list[float] = []
        self._task: Any = None

    async def _watch(self) -> None:
        while True:
            start = time.monotonic()
            await asyncio.sleep(self.every)
            self.samples.append(max(time.monotonic() - start - self.every, 0.0))

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def run_class(
    server: Server,
    n: int,
    seconds: float,
    pauses: int,
    query: str,
    idle_cpu: float,
    settle: float,
    seed: int,
    timeout: float,
    idle_timeout: float = 60.0,
    no_ack: bool = False,
) -> dict[str, Any]:
    """One class of ``n`` students (see the module docstring); returns its measurements."""
    rng = random.Random(seed)
    load = os.getloadavg()
    tb_before = server.tracebacks()
    students = [Student(server.port, query, i, no_ack=no_ack) for i in range(n)]
    lag = LoopLag()
    t0 = time.monotonic()
    connected: list[Student] = []
    failures: list[str] = []
    for s in students:  # one after another, as a class arrives
        try:
            await s.connect(timeout)
            connected.append(s)
        except Exception as exc:
            failures.append(f"connect: {type(exc).__name__}: {exc}"[:200])
    connect_s = time.monotonic() - t0
    try:
        runs = await asyncio.gather(*(s.click("run-button") for s in connected))
        started = dict(zip([id(s) for s in connected], runs))
        await asyncio.gather(*(s.wait_for("running", started[id(s)], timeout) for s in connected))
        # the window starts once every run showed its first frame (reported apart)
        await asyncio.gather(*(s.wait_first_frame(started[id(s)], timeout) for s in connected))
        w0 = time.monotonic()
        lag.start()
        cpu0, own0 = server.cpu_split(), time.process_time()
        spy = _profile(server, n, seconds)
        await asyncio.sleep(seconds)
        if spy is not None:
            await asyncio.to_thread(spy.wait, 30)
        w1 = time.monotonic()
        cpu1, own1 = server.cpu_split(), time.process_time()
        fps, first, window_frames = [], [], 0
        rounds: list[float] = []
        for s in connected:
            frames, running = s.frames(w0, w1)
            window_frames += frames
            fps.append(frames / running)
            rounds.append(s.rounds(w0, w1))
            ff = s.first_frame(started[id(s)])
            first.append(math.inf if ff is None else ff)
        lat = await asyncio.gather(
            *(_pause_cycles(s, pauses, random.Random(rng.random()), timeout) for s in connected)
        )
        lag.stop()
        latencies = [x for row in lat for x in row]
        messages = sum(s.messages for s in connected)
        data_messages = sum(s.data_messages for s in connected)
        mbytes = sum(s.bytes_in for s in connected) / 2**20
        errors = [f"student {s.index}: {s.error}" for s in connected if s.error]
        rss_loaded = server.rss_mb()
    finally:
        lag.stop()
        closed_at = time.monotonic()
        await asyncio.gather(*(s.close() for s in students))
    idle = await _time_to_idle(server, closed_at, idle_cpu, timeout=idle_timeout)
    await asyncio.sleep(max(0.0, settle - (time.monotonic() - closed_at)))
    rss_after = server.rss_mb()
    finite = [x for x in latencies if math.isfinite(x)]
    return {
        "students": n,
        "connected": len(connected),
        "load_before": [round(x, 2) for x in load],
        "connect_s": round(connect_s, 1),
        "fps_min": round(min(fps), 2) if fps else math.nan,
        "fps_median": round(statistics.median(fps), 2) if fps else math.nan,
        "fps_max": round(max(fps), 2) if fps else math.nan,
        # the other side of frame pacing: how fast each run advances (rounds per second)
        "rounds_per_s_min": round(min(rounds)) if rounds else math.nan,
        "rounds_per_s_median": round(statistics.median(rounds)) if rounds else math.nan,
        "first_frame_s_median": round(statistics.median(first), 2) if first else math.nan,
        "first_frame_s_max": round(max(first), 2) if first else math.nan,
        "frames_total": sum(s.frames(t0, time.monotonic())[0] for s in connected),
        "pause_samples": len(latencies),
        "pause_timeouts": len(latencies) - len(finite),
        "pause_p50_ms": round(1000 * _percentile(latencies, 0.5), 0),
        "pause_p95_ms": round(1000 * _percentile(latencies, 0.95), 0),
        "pause_max_ms": round(1000 * max(latencies), 0) if latencies else math.nan,
        "messages_per_session_s": round(
            messages / max(len(connected), 1) / (time.monotonic() - t0), 1
        ),
        "data_messages": data_messages,
        # CPU per frame is robust to other load on the machine (wall times are not)
        "server_cpu_ms_per_frame": round(1000 * (cpu1[0] - cpu0[0]) / max(window_frames, 1), 1),
        "server_cpu_share": round((cpu1[0] - cpu0[0]) / (w1 - w0), 2),
        "workers_cpu_share": round((cpu1[1] - cpu0[1]) / (w1 - w0), 2),
        # the students' side (this process): near 1.0 means it, not the server, sets the pace
        "students_cpu_share": round((own1 - own0) / (w1 - w0), 2),
        "students_loop_lag_p95_ms": round(1000 * _percentile(lag.samples, 0.95), 0),
        "received_mb": round(mbytes, 1),
        "rss_loaded_mb": [round(x, 0) for x in rss_loaded],
        "idle_after_close_s": idle,
        "rss_after_mb": [round(x, 0) for x in rss_after],
        "tracebacks": server.tracebacks() - tb_before,
        "session_errors": errors + failures,
    }


def _profile(server: Server, n: int, seconds: float) -> subprocess.Popen | None:
    """With ``BENCH_PROFILE_DIR`` set and py-spy installed: sample the server's threads during
    the watch window (py-spy raw format, ``<dir>/server-N<n>-<time>.txt``), for finding where a
    frame's server time goes.  ``None`` otherwise."""
    where = os.environ.get("BENCH_PROFILE_DIR")
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not where or not Path(spy).exists():
        return None
    out = Path(where) / f"server-N{n}-{int(time.time())}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    pid, duration = str(server.proc.pid), str(int(seconds))
    cmd = [
        spy,
        "record",
        "-p",
        pid,
        "--duration",
        duration,
        "--rate",
        "200",
        "--nonblocking",
        "--idle",
    ]
    cmd += ["--format", "raw", "-o", str(out)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _time_to_idle(server: Server, since: float, idle_cpu: float, timeout: float) -> float:
    """Seconds from ``since`` until the server and its children used under ``idle_cpu`` % of
    one core for two consecutive half-second samples (``inf`` after ``timeout``)."""
    quiet_since: float | None = None
    prev_cpu, prev_t = server.cpu_seconds(), time.monotonic()
    while time.monotonic() - since < timeout:
        await asyncio.sleep(0.5)
        cpu, now = server.cpu_seconds(), time.monotonic()
        percent = 100.0 * max(cpu - prev_cpu, 0.0) / max(now - prev_t, 1e-6)
        if percent < idle_cpu:
            if quiet_since is None:
                quiet_since = prev_t
            elif now - quiet_since >= 1.0:
                return round(max(quiet_since - since, 0.0), 1)
        else:
            quiet_since = None
        prev_cpu, prev_t = cpu, now
    return math.inf


# ---------------------------------------------------------------------------------- report
def bench(
    students: list[int],
    seconds: float = 20.0,
    pauses: int = 3,
    horizon: int = 200_000,
    runs: int = 8,
    speed: str = "normal",
    classes: int = 2,
    idle_cpu: float = 10.0,
    settle: float = 25.0,
    server_args: list[str] | None = None,
    timeout: float = 60.0,
    seed: int = 0,
    idle_timeout: float = 60.0,
    no_ack: bool = False,
) -> dict[str, Any]:
    """Start a server, run ``classes`` classes of each size in ``students``, stop the server."""
    query = f"horizon={horizon}&runs={runs}&speed={speed}"
    log = Path(tempfile.mkdtemp(prefix="bench-classroom-")) / "server.log"
    server = Server(list(server_args or []), log)
    out: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "load_at_start": [round(x, 2) for x in os.getloadavg()],
        },
        "settings": {
            "query": query,
            "seconds": seconds,
            "pauses_per_student": pauses,
            "classes_per_size": classes,
            "idle_cpu_percent": idle_cpu,
            "server_args": list(server_args or []),
            "students_acknowledge_frames": not no_ack,
        },
        "server_log": str(log),
        "results": [],
    }
    try:
        out["server_ready_s"] = round(server.wait_ready(), 1)
        time.sleep(min(2.0, settle))
        out["rss_idle_mb"] = [round(x, 0) for x in server.rss_mb()]
        c0, t0 = server.cpu_seconds(), time.monotonic()
        time.sleep(min(3.0, max(settle, 1.0)))
        out["cpu_idle_percent"] = round(
            100 * (server.cpu_seconds() - c0) / (time.monotonic() - t0), 1
        )
        # idle = back to the idle server's own CPU (Dask heartbeats...) plus the margin
        threshold = out["cpu_idle_percent"] + idle_cpu
        out["settings"]["idle_threshold_percent"] = round(threshold, 1)
        for n in students:
            rows = []
            for c in range(classes):
                row = asyncio.run(
                    run_class(
                        server,
                        n,
                        seconds,
                        pauses,
                        query,
                        threshold,
                        settle,
                        seed + 100 * n + c,
                        timeout,
                        idle_timeout,
                        no_ack,
                    )
                )
                row["class"] = c + 1
                rows.append(row)
                print(f"# N={n} class {c + 1}: {json.dumps(row)}", file=sys.stderr, flush=True)
            out["results"].extend(rows)
    finally:
        server.stop()
        out["machine"]["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _targets(result: dict[str, Any]) -> list[str]:
    """One line per issue target that can be judged from the measured class sizes."""
    lines = []
    by_n: dict[int, list[dict[str, Any]]] = {}
    for r in result["results"]:
        by_n.setdefault(r["students"], []).append(r)
    for n, rows in sorted(by_n.items()):
        first = rows[0]
        if n >= 30:
            p95 = max(r["pause_p95_ms"] for r in rows)
            lines.append(
                _judge(
                    f"N={n}: Pause p95 {p95:.0f} ms < 300 ms", p95 < TARGETS["pause_p95_ms_at_30"]
                )
            )
            fmin = min(r["fps_min"] for r in rows)
            lines.append(
                _judge(f"N={n}: every session >= 2 frames/s (slowest {fmin:.2f})", fmin >= 2.0)
            )
        if 10 <= n < 30:  # (the issue asks 5 frames/s of 10 students, 2 of 30)
            fmin = min(r["fps_min"] for r in rows)
            lines.append(
                _judge(f"N={n}: every session >= 5 frames/s (slowest {fmin:.2f})", fmin >= 5.0)
            )
        tb = sum(r["tracebacks"] for r in rows)
        lines.append(_judge(f"N={n}: no tracebacks in the server log ({tb})", tb == 0))
        idle = max(r["idle_after_close_s"] for r in rows)
        lines.append(
            _judge(f"N={n}: CPU idle within 5 s of the last close ({idle} s)", idle <= 5.0)
        )
        if len(rows) >= 2:
            a, b = first["rss_after_mb"][0], rows[1]["rss_after_mb"][0]
            growth = (b - a) / a if a else math.nan
            lines.append(
                _judge(
                    f"N={n}: server RSS after class 2 within 10% of class 1 "
                    f"({a:.0f} -> {b:.0f} MB, {100 * growth:+.1f}%)",
                    abs(growth) <= TARGETS["rss_class_to_class"],
                )
            )
    return lines


def _judge(text: str, ok: bool) -> str:
    return f"- {'met' if ok else 'MISSED'}: {text}"


def to_markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    head = (
        "| N | class | frames/s per session (min / median) | first frame (median / max) | "
        "Pause -> paused p50 / p95 (max) | server CPU per frame (share of a core) | "
        "server RSS loaded / after (MB) | workers RSS loaded / "
        "after (MB) | tracebacks | idle after last close | load before |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in result["results"]:
        rows.append(
            f"| {r['students']} | {r['class']} | {r['fps_min']:.1f} / {r['fps_median']:.1f} | "
            f"{r['first_frame_s_median']:.2f} / {r['first_frame_s_max']:.2f} s | "
            f"{r['pause_p50_ms']:.0f} / {r['pause_p95_ms']:.0f} ({r['pause_max_ms']:.0f}) ms"
            f"{' [' + str(r['pause_timeouts']) + ' timeouts]' if r['pause_timeouts'] else ''} | "
            f"{r.get('server_cpu_ms_per_frame', math.nan):.1f} ms "
            f"({r.get('server_cpu_share', math.nan):.2f}) | "
            f"{r['rss_loaded_mb'][0]:.0f} / {r['rss_after_mb'][0]:.0f} | "
            f"{r['rss_loaded_mb'][1]:.0f} / {r['rss_after_mb'][1]:.0f} | {r['tracebacks']} | "
            f"{r['idle_after_close_s']} s | {r['load_before'][0]:.1f} |"
        )
    s = result["settings"]
    text = (
        f"Classroom benchmark (`benchmarks/bench_classroom.py`): `python -m dashboard serve` "
        f"{' '.join(s['server_args'])}(embedded Dask cluster) on {m['cores']} cores; each "
        f"student is a browser-less Bokeh websocket session of `/dashboard?{s['query']}` "
        f"(3 algorithms) that "
        f"presses Run, is watched for {s['seconds']:.0f} s, then presses Pause "
        f"{s['pauses_per_student']} times. Machine load average (1 min) at start "
        f"{m['load_at_start'][0]:.1f}, at end {m.get('load_at_end', [math.nan])[0]:.1f}; idle "
        f"server RSS {result.get('rss_idle_mb', [math.nan])[0]:.0f} MB, workers "
        f"{result.get('rss_idle_mb', [0, math.nan])[1]:.0f} MB, CPU of server + workers "
        f"before the first class {result.get('cpu_idle_percent', math.nan)}% of one core "
        f"(idle after a class = below {s.get('idle_threshold_percent', math.nan)}%).\n\n"
    )
    errors = [e for r in result["results"] for e in r["session_errors"]]
    tail = "\n" + "\n".join(_targets(result)) + "\n"
    if errors:
        tail += "\nSession errors:\n" + "\n".join(f"- {e}" for e in errors[:20]) + "\n"
    return text + head + "\n".join(rows) + "\n" + tail


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            "a comma-separated list of class sizes, e.g. 1,10,30"
        ) from None
    if not sizes or not all(1 <= n <= 200 for n in sizes):
        raise argparse.ArgumentTypeError("class sizes must be between 1 and 200")
    return sizes


def _interrupt(*_: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=_sizes, default=[1, 10, 30], help="class sizes, e.g. 1,10,30")
    p.add_argument(
        "--max-students", type=int, default=None, help="also run a class of this size (e.g. 60)"
    )
    p.add_argument("--seconds", type=float, default=20.0, help="watch window per class (s)")
    p.add_argument("--pauses", type=int, default=3, help="Pause presses per student")
    p.add_argument("--horizon", type=int, default=200_000)
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--speed", default="normal", choices=["slow", "normal", "fast", "max"])
    p.add_argument(
        "--classes", type=int, default=2, help="classes per size (memory class-to-class)"
    )
    p.add_argument(
        "--idle-cpu",
        type=float,
        default=10.0,
        help="idle = below the idle server's CPU plus this many %% of one core",
    )
    p.add_argument("--settle", type=float, default=25.0, help="seconds after a class before RSS")
    p.add_argument("--timeout", type=float, default=60.0, help="per connect / per awaited patch")
    p.add_argument("--server-arg", action="append", default=[], help="extra `serve` argument")
    p.add_argument(
        "--no-ack",
        action="store_true",
        help="students do not acknowledge frames (a browser's page does; the server then "
        "streams as to a client without JavaScript)",
    )
    p.add_argument("--format", choices=["markdown", "json"], default="markdown")
    p.add_argument("--out", help="write the report here too")
    args = p.parse_args(argv)
    # SIGTERM (e.g. `timeout`) unwinds like Ctrl-C, so the server is killed in bench()'s finally
    signal.signal(signal.SIGTERM, _interrupt)
    sizes = list(args.students)
    if args.max_students and args.max_students not in sizes:
        sizes.append(args.max_students)
    result = bench(
        sizes,
        seconds=args.seconds,
        pauses=args.pauses,
        horizon=args.horizon,
        runs=args.runs,
        speed=args.speed,
        classes=args.classes,
        idle_cpu=args.idle_cpu,
        settle=args.settle,
        server_args=args.server_arg,
        timeout=args.timeout,
        no_ack=args.no_ack,
    )
    text = (
        json.dumps(result, indent=1, default=str) if args.format == "json" else to_markdown(result)
    )
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
