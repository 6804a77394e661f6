"""Fetch Maven artifacts, with their transitive dependencies, into a local folder of jars.

The embedded test broker (:mod:`kafka_rescalable.testing.local_kafka`) runs Apache Kafka from its
Maven jars, so that a developer needs only ``pip`` and a Java runtime: no Kafka download, no Docker.
Resolution runs the Apache Ivy jar that pyspark ships, with ``java``, through Ivy's own command
line (``-dependency``, ``-retrieve``) and Ivy's default settings, whose public repository is
Maven Central: no descriptor or settings file is written, and no repository address is ours.

Ivy's command line takes one dependency per run, so each coordinate gets its own run, all
sharing one download cache. When two runs retrieve different revisions of one artifact, the
highest is kept, as Ivy's default conflict manager does within a single resolution.

Each set of coordinates gets its own cache folder. A marker file, written last and atomically,
records the jars of a complete resolution; once it exists, later calls only read it and never
touch the network or start a JVM.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from kafka_rescalable.testing._broker.process import last_lines, run_captured
from kafka_rescalable.testing._cache import exclusive_lock, write_marker
from kafka_rescalable.testing.errors import JarResolutionError

__all__ = [
    "CACHE_ENV_VAR",
    "KAFKA_BROKER_COORDINATES",
    "KAFKA_VERSION",
    "JarResolutionError",
    "default_cache_root",
    "find_java",
    "resolve_jars",
]

KAFKA_VERSION = "4.1.1"

KAFKA_BROKER_COORDINATES: tuple[str, ...] = (
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    # Kafka logs through slf4j-api 1.7 but its POM brings no slf4j binding (the binary
    # distribution adds this one): without it the broker's log lines are dropped with an
    # slf4j warning. The version matches the log4j-core that kafka_2.13 itself depends on.
    "org.apache.logging.log4j:log4j-slf4j-impl:2.24.3",
)

CACHE_ENV_VAR = "KAFKA_RESCALABLE_CACHE"

_MARKER_NAME = "resolved.json"
_MARKER_VERSION = 1
_OUTPUT_TAIL_LINES = 40
_RESOLVE_TIMEOUT_S = 900.0
_COORDINATE = re.compile(r"^[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-+]+$")
# Each run retrieves into its own folder, in a layout that keeps what the merge of the runs
# needs (which artifact, which revision) in the path instead of in a file name to parse.
_RETRIEVE_PATTERN = (
    "[organisation]/[artifact](-[classifier])/[revision]/[artifact]-[revision](-[classifier]).[ext]"
)
# Ivy prints download progress ("....... (309kB)") even with -warn: noise in an error message.
_PROGRESS_LINE = re.compile(r"^\s*\.*\s*\(\d+kB\)\s*$")
# What the JVM's networking says when the repository cannot be reached at all.
_NETWORK_FAILURE = re.compile(
    r"Server access error|UnknownHostException|ConnectException|NoRouteToHostException"
    r"|SocketTimeoutException|SSLHandshakeException"
)
_REVISION_PART = re.compile(r"\d+|[A-Za-z]+")

Tool = Literal["auto", "ivy"]


def default_cache_root() -> Path:
    """Return the folder under which every cache of this library lives.

    ``$KAFKA_RESCALABLE_CACHE`` wins, so CI can point all runs at one persistent folder;
    otherwise the XDG cache folder (``~/.cache``) is used, as other developer tools do.
    """
    configured = os.environ.get(CACHE_ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "kafka-rescalable"


def find_java() -> str:
    """Return the ``java`` executable: ``$JAVA_HOME/bin/java`` first, then ``PATH``.

    Raises
    ------
    FileNotFoundError
        If neither exists; the message says that Java 17 or newer is needed.
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("java")
    if found is None:
        msg = "no 'java' executable: install a Java 17+ runtime and put it on PATH or JAVA_HOME"
        raise FileNotFoundError(msg)
    return found


def resolve_jars(
    coordinates: Sequence[str],
    cache_dir: Path | None = None,
    *,
    tool: Tool = "auto",
    transitive: bool = True,
) -> list[Path]:
    """Return the jars of ``coordinates`` and all their runtime dependencies, downloading once.

    Parameters
    ----------
    coordinates
        Maven coordinates ``group:artifact:version``; order does not matter.
    cache_dir
        Folder that receives the jars. Defaults to
        ``<cache root>/jars/<digest of the coordinates>`` (see :func:`default_cache_root`), so
        that different sets of coordinates never share, and so never mix, their jars.
    tool
        ``"auto"`` or ``"ivy"``, which are the same: Ivy is the one resolver. The parameter
        stays so that callers which forced Ivy when Maven was the default keep working.
    transitive
        ``False`` fetches exactly the listed artifacts: for a set pinned by hand, when a
        published dependency is missing from Maven Central.

    Returns
    -------
    list[Path]
        The jar files, sorted by name: a classpath in a stable order.

    Raises
    ------
    TypeError
        If ``coordinates`` is a single string rather than a sequence of them.
    ValueError
        If a coordinate is not ``group:artifact:version`` or ``tool`` is unknown.
    JarResolutionError
        If there is no ``java`` or no Ivy jar, the repository cannot be reached, or an artifact
        does not exist; the message says which, and ends with Ivy's output.
    """
    wanted = _validated(coordinates)
    if tool not in ("auto", "ivy"):
        msg = f"tool must be 'auto' or 'ivy' (jars are resolved with Ivy only), got {tool!r}"
        raise ValueError(msg)
    target = cache_dir if cache_dir is not None else _default_cache_dir(wanted, transitive)

    cached = _read_marker(target, wanted)
    if cached is not None:
        return cached
    target.mkdir(parents=True, exist_ok=True)
    # Two processes (pytest workers, a test and an example) may resolve at once: the lock
    # makes the second wait and then find the first one's marker.
    with exclusive_lock(target / ".lock"):
        cached = _read_marker(target, wanted)
        if cached is not None:
            return cached
        names = _resolve_into(target, wanted, transitive)
        _write_marker(target, wanted, names)
    return [target / name for name in names]


def _validated(coordinates: Sequence[str]) -> tuple[str, ...]:
    if isinstance(coordinates, str):
        msg = "coordinates must be a sequence of 'group:artifact:version' strings, not one string"
        raise TypeError(msg)
    wanted = tuple(sorted(set(coordinates)))
    if not wanted:
        msg = "coordinates must name at least one artifact"
        raise ValueError(msg)
    for coordinate in wanted:
        if not _COORDINATE.match(coordinate):
            msg = f"Maven coordinate {coordinate!r} is not of the form 'group:artifact:version'"
            raise ValueError(msg)
    return wanted


def _default_cache_dir(wanted: tuple[str, ...], transitive: bool) -> Path:
    key = "\n".join(wanted) + ("" if transitive else "\nintransitive")
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return default_cache_root() / "jars" / digest


def _read_marker(target: Path, wanted: tuple[str, ...]) -> list[Path] | None:
    """Return the cached jars if a complete resolution of exactly ``wanted`` is recorded."""
    try:
        document = json.loads((target / _MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if document.get("version") != _MARKER_VERSION or tuple(document.get("coordinates", ())) != (
        wanted
    ):
        return None
    jars = [target / name for name in document.get("jars", ())]
    # A jar deleted by hand (or by a cache cleaner) means the classpath is incomplete.
    if not jars or not all(jar.is_file() for jar in jars):
        return None
    return jars


def _write_marker(target: Path, wanted: tuple[str, ...], names: list[str]) -> None:
    document = {"version": _MARKER_VERSION, "coordinates": list(wanted), "jars": names}
    write_marker(target / _MARKER_NAME, document)


def _resolve_into(target: Path, wanted: tuple[str, ...], transitive: bool) -> list[str]:
    """Run Ivy once per coordinate into a fresh folder inside ``target``, then move the jars up.

    Files left by an earlier, interrupted attempt stay harmless: only the names returned here
    go into the marker.
    """
    try:
        java = find_java()
    except FileNotFoundError as error:
        raise JarResolutionError(str(error)) from error
    ivy_jar = _find_ivy_jar()
    # A lasting download cache, as ~/.m2 is for Maven: a second resolution (other coordinates,
    # a deleted jar folder) then downloads only what is new.
    ivy_cache = default_cache_root() / "ivy"
    ivy_cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target, prefix=".resolving-") as work:
        runs = [Path(work) / str(index) for index in range(len(wanted))]
        # Ivy's default settings take no lock on the cache, and each run also writes there the
        # module it makes of "-dependency": runs of two processes must not interleave.
        with exclusive_lock(default_cache_root() / "ivy.lock"):
            for coordinate, output_dir in zip(wanted, runs, strict=True):
                command = _ivy_command(java, ivy_jar, ivy_cache, coordinate, output_dir, transitive)
                _run_ivy(command, coordinate, output_dir)
        chosen = _highest_revisions(runs)
        for jar in chosen:
            os.replace(jar, target / jar.name)
    return sorted(jar.name for jar in chosen)


def _ivy_command(
    java: str, ivy_jar: Path, ivy_cache: Path, coordinate: str, output_dir: Path, transitive: bool
) -> list[str]:
    group, artifact, version = coordinate.split(":")
    command = [
        java,
        "-jar",
        str(ivy_jar),
        "-cache",
        str(ivy_cache),
        "-dependency",
        group,
        artifact,
        version,
        # Ivy's "default" configuration of a Maven module is its compile and runtime scopes.
        "-confs",
        "default",
        # Space-separated: "jar,bundle" would be read as one unknown type and retrieve nothing.
        "-types",
        "jar",
        "bundle",
        "-retrieve",
        f"{output_dir}/{_RETRIEVE_PATTERN}",
        "-warn",
    ]
    if not transitive:
        command.append("-notransitive")
    return command


def _run_ivy(command: list[str], coordinate: str, output_dir: Path) -> None:
    """Run one Ivy resolution; raise a :class:`JarResolutionError` that says what went wrong."""
    try:
        finished = run_captured(command, cwd=output_dir.parent, timeout_s=_RESOLVE_TIMEOUT_S)
    except OSError as error:
        msg = f"could not run Ivy ({command[0]}): {error}"
        raise JarResolutionError(msg) from error
    shown = "\n".join(last_lines(finished.output, _OUTPUT_TAIL_LINES, skip=_PROGRESS_LINE))
    if finished.timed_out:
        msg = f"Ivy did not resolve {coordinate} within {_RESOLVE_TIMEOUT_S:.0f} s"
    elif finished.returncode != 0:
        msg = f"Ivy failed (exit code {finished.returncode}) resolving {coordinate}: "
        msg += _failure_hint(finished.output.decode("utf-8", errors="replace"))
    # Ivy can exit 0 having copied nothing (an artifact of an unexpected type, say).
    elif not any(output_dir.rglob("*.jar")):
        msg = f"Ivy exited 0 but retrieved no jar for {coordinate}"
    else:
        return
    raise JarResolutionError(_with_tail(msg, command, shown), shown)


def _failure_hint(output: str) -> str:
    """Tell an unreachable repository from a missing artifact, and what to do about each."""
    if _NETWORK_FAILURE.search(output):
        return (
            "the repository could not be reached. Check the network access to Maven Central; "
            "behind a proxy, give Java its address, e.g. "
            "JAVA_TOOL_OPTIONS='-Dhttps.proxyHost=HOST -Dhttps.proxyPort=PORT'"
        )
    if "not found" in output:
        return "no such artifact in the repository; check the group, artifact and version"
    return "see Ivy's output below"


def _with_tail(message: str, command: list[str], tail: str) -> str:
    shown = tail if tail else "(no output)"
    return f"{message}\ncommand: {' '.join(command)}\nlast lines of its output:\n{shown}"


def _highest_revisions(runs: Sequence[Path]) -> list[Path]:
    """Return every retrieved jar, one revision per artifact: the highest any run retrieved.

    The retrieve pattern puts each jar at ``<org>/<artifact>/<revision>/<file>``.
    """
    best: dict[tuple[str, str], Path] = {}
    for run in runs:
        for jar in run.glob("*/*/*/*.jar"):
            key = (jar.parent.parent.parent.name, jar.parent.parent.name)
            known = best.get(key)
            if known is None or _is_newer(jar.parent.name, known.parent.name):
                best[key] = jar
    return list(best.values())


def _is_newer(revision: str, than: str) -> bool:
    """Whether ``revision`` is above ``than``: numbers as numbers, a release above ``-rc1``.

    Each part is ``(1, number)`` or ``(0, word)``, and the shorter revision is padded with
    ``(0.5, "")``, so that ``1.0`` sorts above ``1.0-rc1`` and below ``1.0.1``. Ivy's own
    ordering knows more qualifiers; two runs disagreeing on a revision is rare enough for this.
    """
    ours, theirs = _revision_parts(revision), _revision_parts(than)
    width = max(len(ours), len(theirs))
    padding: list[tuple[float, int | str]] = [(0.5, "")]
    return ours + padding * (width - len(ours)) > theirs + padding * (width - len(theirs))


def _revision_parts(revision: str) -> list[tuple[float, int | str]]:
    return [
        (1, int(part)) if part.isdigit() else (0, part.lower())
        for part in _REVISION_PART.findall(revision)
    ]


def _find_ivy_jar() -> Path:
    """Locate the Ivy jar inside the installed pyspark, without importing pyspark."""
    folders: list[Path] = []
    spec = importlib.util.find_spec("pyspark")
    if spec is not None and spec.submodule_search_locations:
        folders.extend(Path(location) / "jars" for location in spec.submodule_search_locations)
    spark_home = os.environ.get("SPARK_HOME")
    if spark_home:
        folders.append(Path(spark_home) / "jars")
    for folder in folders:
        candidates = sorted(folder.glob("ivy-*.jar"))
        if candidates:
            return candidates[-1]
    searched = ", ".join(str(folder) for folder in folders) or "(pyspark is not installed)"
    msg = (
        f"no Ivy jar (ivy-*.jar) in {searched}: jars are resolved with the Ivy that pyspark "
        "ships; install pyspark (pip install -e '.[test]') or point SPARK_HOME at a Spark"
    )
    raise JarResolutionError(msg)
