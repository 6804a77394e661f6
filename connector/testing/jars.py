"""Fetch Maven artifacts, with their transitive dependencies, into a local folder of jars.

The embedded test broker (:mod:`connector.testing.local_kafka`) runs Apache Kafka from its
Maven jars, so that a developer needs only ``pip`` and a Java runtime: no Kafka download, no Docker.
Resolution uses Maven when ``mvn`` is on ``PATH`` (it honours the user's mirrors and proxies
in ``settings.xml``) and otherwise the Apache Ivy jar that pyspark ships, run with ``java``.

Each set of coordinates gets its own cache folder. A marker file, written last and atomically,
records the jars of a complete resolution; once it exists, later calls only read it and never
touch the network or start a JVM.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape, quoteattr

from connector.testing.errors import JarResolutionError

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

# Pinned, rather than left to the default binding of the installed Maven, so that every Maven
# version copies the same way.
_DEPENDENCY_PLUGIN_VERSION = "3.8.1"

_MARKER_NAME = "resolved.json"
_MARKER_VERSION = 1
_OUTPUT_TAIL_LINES = 40
_RESOLVE_TIMEOUT_S = 900.0
_COORDINATE = re.compile(r"^[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-+]+$")
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

Tool = Literal["auto", "maven", "ivy"]


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
        ``"maven"`` or ``"ivy"`` to force one resolver; ``"auto"`` uses Maven when ``mvn`` is on
        ``PATH`` and falls back to Ivy if Maven fails, since a broken local Maven setup should
        not stop a user who has Java.
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
        If no resolver could download the artifacts; the message ends with its output.
    """
    wanted = _validated(coordinates)
    if tool not in ("auto", "maven", "ivy"):
        msg = f"tool must be 'auto', 'maven' or 'ivy', got {tool!r}"
        raise ValueError(msg)
    target = cache_dir if cache_dir is not None else _default_cache_dir(wanted, transitive)

    cached = _read_marker(target, wanted)
    if cached is not None:
        return cached
    target.mkdir(parents=True, exist_ok=True)
    # Two processes (pytest workers, a test and an example) may resolve at once: the lock
    # makes the second wait and then find the first one's marker.
    with _exclusive_lock(target / ".lock"):
        cached = _read_marker(target, wanted)
        if cached is not None:
            return cached
        names = _resolve_into(target, wanted, tool, transitive)
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
    fd, temp_name = tempfile.mkstemp(dir=target, prefix=".resolved-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp_name, target / _MARKER_NAME)


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _resolve_into(target: Path, wanted: tuple[str, ...], tool: Tool, transitive: bool) -> list[str]:
    """Download into a fresh folder inside ``target``, then move the jars up by name.

    Files left by an earlier, interrupted attempt stay harmless: only the names returned here
    go into the marker.
    """
    with tempfile.TemporaryDirectory(dir=target, prefix=".resolving-") as work:
        work_dir = Path(work)
        output_dir = work_dir / "jars"
        output_dir.mkdir()
        failures: list[JarResolutionError] = []
        resolvers = []
        if tool in ("auto", "maven") and (tool == "maven" or shutil.which("mvn")):
            resolvers.append(_resolve_with_maven)
        if tool in ("auto", "ivy"):
            resolvers.append(_resolve_with_ivy)
        for resolver in resolvers:
            try:
                resolver(wanted, work_dir, output_dir, transitive)
            except JarResolutionError as error:
                failures.append(error)
                shutil.rmtree(output_dir)
                output_dir.mkdir()
                continue
            names = sorted(path.name for path in output_dir.glob("*.jar"))
            for name in names:
                os.replace(output_dir / name, target / name)
            return names
        if len(failures) == 1:
            raise failures[0]
        detail = "\n\n".join(str(error) for error in failures)
        msg = f"could not resolve {', '.join(wanted)} with Maven nor with Ivy:\n\n{detail}"
        raise JarResolutionError(msg, failures[-1].output_tail)


def _resolve_with_maven(
    wanted: tuple[str, ...], work_dir: Path, output_dir: Path, transitive: bool
) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        msg = "'mvn' is not on PATH"
        raise JarResolutionError(msg)
    pom = work_dir / "pom.xml"
    pom.write_text(_pom_xml(wanted, transitive), encoding="utf-8")
    command = [
        mvn,
        "-q",
        "-B",
        "-Dstyle.color=never",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={output_dir}",
        "-DincludeScope=runtime",
    ]
    _run_resolver("Maven", command, wanted, output_dir, cwd=work_dir)


def _resolve_with_ivy(
    wanted: tuple[str, ...], work_dir: Path, output_dir: Path, transitive: bool
) -> None:
    try:
        java = find_java()
    except FileNotFoundError as error:
        raise JarResolutionError(str(error)) from error
    ivy_jar = _find_ivy_jar()
    settings = work_dir / "ivysettings.xml"
    # A lasting download cache, as ~/.m2 is for Maven: a second resolution (other coordinates,
    # a deleted jar folder) then downloads only what is new.
    settings.write_text(_ivy_settings_xml(default_cache_root() / "ivy"), encoding="utf-8")
    module = work_dir / "ivy.xml"
    module.write_text(_ivy_module_xml(wanted, transitive), encoding="utf-8")
    command = [
        java,
        "-jar",
        str(ivy_jar),
        "-settings",
        str(settings),
        "-ivy",
        str(module),
        # Ivy's "default" configuration of a Maven module is its compile and runtime scopes.
        "-confs",
        "default",
        # Space-separated: "jar,bundle" would be read as one unknown type and retrieve nothing.
        "-types",
        "jar",
        "bundle",
        "-retrieve",
        f"{output_dir}/[artifact]-[revision](-[classifier]).[ext]",
        "-warn",
    ]
    _run_resolver("Ivy", command, wanted, output_dir, cwd=work_dir)


def _run_resolver(
    name: str, command: list[str], wanted: tuple[str, ...], output_dir: Path, cwd: Path
) -> None:
    what = ", ".join(wanted)
    try:
        completed = subprocess.run(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=_RESOLVE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        tail = _tail(error.output or b"")
        msg = f"{name} did not resolve {what} within {_RESOLVE_TIMEOUT_S:.0f} s"
        raise JarResolutionError(_with_tail(msg, command, tail), tail) from error
    except OSError as error:
        msg = f"could not run {name} ({command[0]}): {error}"
        raise JarResolutionError(msg) from error
    tail = _tail(completed.stdout)
    if completed.returncode != 0:
        msg = f"{name} failed (exit code {completed.returncode}) resolving {what}"
        raise JarResolutionError(_with_tail(msg, command, tail), tail)
    # Both tools can exit 0 having copied nothing (an artifact of an unexpected type, say).
    if not any(output_dir.glob("*.jar")):
        msg = f"{name} exited 0 but retrieved no jar for {what}"
        raise JarResolutionError(_with_tail(msg, command, tail), tail)


def _tail(output: bytes) -> str:
    text = _ANSI_ESCAPE.sub("", output.decode("utf-8", errors="replace"))
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-_OUTPUT_TAIL_LINES:])


def _with_tail(message: str, command: list[str], tail: str) -> str:
    shown = tail if tail else "(no output)"
    return f"{message}\ncommand: {' '.join(command)}\nlast lines of its output:\n{shown}"


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
    msg = f"'mvn' is not on PATH and no Ivy jar was found in {searched}"
    raise JarResolutionError(msg)


def _split(coordinate: str) -> tuple[str, str, str]:
    group, artifact, version = coordinate.split(":")
    return group, artifact, version


def _pom_xml(wanted: tuple[str, ...], transitive: bool = True) -> str:
    exclusions = (
        ""
        if transitive
        else "<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId>"
        "</exclusion></exclusions>"
    )
    dependencies = "\n".join(
        "    <dependency>"
        f"<groupId>{escape(group)}</groupId>"
        f"<artifactId>{escape(artifact)}</artifactId>"
        f"<version>{escape(version)}</version>"
        f"{exclusions}"
        "</dependency>"
        for group, artifact, version in map(_split, wanted)
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafka-rescalable.local</groupId>
  <artifactId>jar-resolution</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>{_DEPENDENCY_PLUGIN_VERSION}</version>
      </plugin>
    </plugins>
  </build>
</project>
"""


def _ivy_module_xml(wanted: tuple[str, ...], transitive: bool = True) -> str:
    dependencies = "\n".join(
        f"    <dependency org={quoteattr(group)} name={quoteattr(artifact)}"
        f' rev={quoteattr(version)} conf="default->default"'
        f' transitive="{str(transitive).lower()}"/>'
        for group, artifact, version in map(_split, wanted)
    )
    return f"""<ivy-module version="2.0">
  <info organisation="kafka-rescalable.local" module="jar-resolution"/>
  <dependencies>
{dependencies}
  </dependencies>
</ivy-module>
"""


def _ivy_settings_xml(ivy_cache: Path) -> str:
    # Ivy's own public resolver only, as its default settings declare it (no root: the address
    # is Ivy's default, Maven Central): a chain through ~/.m2 breaks on the half-filled local
    # repositories (a POM without its jar) that IDEs leave behind. The lock lets two
    # resolutions share the download cache at once.
    return f"""<ivysettings>
  <settings defaultResolver="public"/>
  <caches defaultCacheDir={quoteattr(str(ivy_cache))} lockStrategy="artifact-lock-nio"/>
  <resolvers>
    <ibiblio name="public" m2compatible="true"/>
  </resolvers>
</ivysettings>
"""
