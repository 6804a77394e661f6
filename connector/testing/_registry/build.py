"""Build Apicurio Registry, a real Confluent-compatible schema registry, from Maven Central.

Apicurio Registry is a Quarkus application. Maven Central holds its jars but no runnable
distribution, and a Quarkus application only runs after Quarkus' build step ("augmentation")
has turned its jars into one. So a small Maven project is written that depends on the
registry and runs ``quarkus-maven-plugin``'s ``build`` goal, which leaves the runnable folder
``target/quarkus-app`` (``quarkus-run.jar`` and its ``lib``); that folder is kept in the cache
and the rest thrown away.

Why version 2.4.2.Final: it is the newest release that Maven Central, as this project's
machines reach it, holds whole. Registry 3.x needs Java 21 (3.3.x) or lacks modules or its
parent POM there (3.0.x to 3.3.x); 2.5 and 2.6 lack ``apicurio-registry-schema-util-provider``.
Two of 2.4.2's dependencies are missing too, and the project below replaces them:

* ``com.github.everit-org.json-schema:org.everit.json.schema:1.14.2`` (a JitPack artifact) by
  the same library as Maven Central publishes it, ``com.github.erosb:everit-json-schema``;
* the build-time half of ``apicurio-common-app-components-config-index`` 0.1.18.Final, a
  Quarkus extension that records which settings may change at runtime, by version 0.1.10.Final,
  whose runtime half holds the same single class and whose build-time half is there.

The registry's own jar carries no Jandex index, so it is named as a dependency to index: without
that Quarkus finds none of its beans.

The build runs once per recipe (the POM and the build properties): its output goes into a cache
folder named after a digest of the recipe, a lock serialises builds, and a marker written last
records a complete one; later calls read the marker and neither run Maven nor touch the network.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from kafka_rescalable.testing._broker.process import last_lines, run_captured, shown_command
from kafka_rescalable.testing._cache import exclusive_lock, write_marker
from kafka_rescalable.testing.errors import SchemaRegistryBuildError
from kafka_rescalable.testing.jars import default_cache_root, find_java

__all__ = ["APICURIO_VERSION", "QUARKUS_VERSION", "find_maven", "registry_app"]

APICURIO_VERSION = "2.4.2.Final"
# The Quarkus release that Apicurio Registry 2.4.2.Final is built on (its parent POM says so).
QUARKUS_VERSION = "2.16.4.Final"

_POM = f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.kafka-rescalable</groupId>
  <artifactId>schema-registry</artifactId>
  <version>{APICURIO_VERSION}</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>io.apicurio</groupId>
        <artifactId>apicurio-common-app-components-config-index</artifactId>
        <version>0.1.10.Final</version>
      </dependency>
      <dependency>
        <groupId>io.apicurio</groupId>
        <artifactId>apicurio-registry</artifactId>
        <version>{APICURIO_VERSION}</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>io.apicurio</groupId>
      <artifactId>apicurio-registry-app</artifactId>
      <version>{APICURIO_VERSION}</version>
      <exclusions>
        <exclusion>
          <groupId>com.github.everit-org.json-schema</groupId>
          <artifactId>org.everit.json.schema</artifactId>
        </exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>com.github.erosb</groupId>
      <artifactId>everit-json-schema</artifactId>
      <version>1.14.2</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>io.quarkus</groupId>
        <artifactId>quarkus-maven-plugin</artifactId>
        <version>{QUARKUS_VERSION}</version>
        <executions>
          <execution>
            <goals><goal>build</goal></goals>
          </execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
"""

# Given to Maven as system properties, because only those outrank the registry's own
# "%prod.quarkus.package.type=legacy-jar" (POM properties do not): a fast-jar starts sooner.
_BUILD_PROPERTIES: tuple[tuple[str, str], ...] = (
    ("quarkus.package.type", "fast-jar"),
    ("quarkus.index-dependency.registry.group-id", "io.apicurio"),
    ("quarkus.index-dependency.registry.artifact-id", "apicurio-registry-app"),
)

_APP_FOLDER = "quarkus-app"
_RUN_JAR = "quarkus-run.jar"
_MARKER_NAME = "built.json"
_MARKER_VERSION = 1
_BUILD_TIMEOUT_S = 1200.0
_OUTPUT_TAIL_LINES = 40
_NETWORK_FAILURE = re.compile(
    r"Unknown host|UnknownHostException|Connection refused|ConnectException|timed out"
    r"|PKIX path building failed|Could not transfer artifact"
)


def find_maven() -> str:
    """Return the ``mvn`` executable on ``PATH``.

    Raises
    ------
    SchemaRegistryBuildError
        If there is none; the message says what to install, or how to use a running registry.
    """
    found = shutil.which("mvn")
    if found is None:
        msg = (
            "no 'mvn' executable: the local schema registry is built once with Apache Maven "
            "3.8+; install it and put it on PATH, or point SCHEMA_REGISTRY_URL at a running "
            "Confluent-compatible registry"
        )
        raise SchemaRegistryBuildError(msg)
    return found


def registry_app(cache_dir: Path | None = None) -> Path:
    """Return the registry's ``quarkus-run.jar``, building the application the first time.

    Parameters
    ----------
    cache_dir
        Folder that receives the application. Defaults to
        ``<cache root>/schema-registry/apicurio-<version>-<digest of the recipe>`` (see
        :func:`kafka_rescalable.testing.jars.default_cache_root`).

    Returns
    -------
    Path
        The jar to run with ``java -jar``; its folder holds everything else it needs.

    Raises
    ------
    SchemaRegistryBuildError
        If there is no ``java`` or ``mvn``, Maven Central cannot be reached, or the build fails;
        the message says which, and ends with Maven's last lines.
    """
    target = cache_dir if cache_dir is not None else _default_cache_dir()
    built = _read_marker(target)
    if built is not None:
        return built
    target.mkdir(parents=True, exist_ok=True)
    # Two processes (pytest workers, a test and a developer's shell) may build at once: the
    # lock makes the second wait and then find the first one's marker.
    with exclusive_lock(target / ".lock"):
        built = _read_marker(target)
        if built is not None:
            return built
        _build_into(target)
        _write_marker(target)
    return target / _APP_FOLDER / _RUN_JAR


def _recipe_digest() -> str:
    recipe = _POM + "\n".join(f"{key}={value}" for key, value in _BUILD_PROPERTIES)
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def _default_cache_dir() -> Path:
    name = f"apicurio-{APICURIO_VERSION}-{_recipe_digest()}"
    return default_cache_root() / "schema-registry" / name


def _read_marker(target: Path) -> Path | None:
    """Return the run jar if a complete build of this recipe is recorded in ``target``."""
    try:
        document = json.loads((target / _MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if document.get("version") != _MARKER_VERSION or document.get("recipe") != _recipe_digest():
        return None
    run_jar = target / _APP_FOLDER / _RUN_JAR
    # A folder emptied by hand (or by a cache cleaner) means the application is incomplete.
    return run_jar if run_jar.is_file() and (target / _APP_FOLDER / "lib").is_dir() else None


def _write_marker(target: Path) -> None:
    document = {
        "version": _MARKER_VERSION,
        "recipe": _recipe_digest(),
        "apicurio": APICURIO_VERSION,
    }
    write_marker(target / _MARKER_NAME, document)


def _build_into(target: Path) -> None:
    """Run the Maven build in a fresh folder inside ``target``; move the application up.

    An application left by an earlier attempt that died before its marker is replaced.
    """
    # Maven picks its Java as find_java() does ($JAVA_HOME, then PATH), so the build and the
    # registry run on the same one; checked first for the clearer message.
    try:
        find_java()
    except FileNotFoundError as error:
        raise SchemaRegistryBuildError(str(error)) from error
    maven = find_maven()
    # A lasting repository of our own, as the Ivy cache is for the broker's jars: a rebuild
    # (a new recipe, a deleted application folder) then downloads only what is new.
    repository = default_cache_root() / "m2"
    command = [
        maven,
        "--batch-mode",
        "--quiet",
        f"-Dmaven.repo.local={repository}",
        *(f"-D{key}={value}" for key, value in _BUILD_PROPERTIES),
        "package",
    ]
    with tempfile.TemporaryDirectory(dir=target, prefix=".building-") as work:
        project = Path(work)
        (project / "pom.xml").write_text(_POM, encoding="utf-8")
        # Maven's local repository takes no lock of its own: builds must not interleave.
        repository.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(default_cache_root() / "m2.lock"):
            _run_maven(command, project)
        built = project / "target" / _APP_FOLDER
        if not (built / _RUN_JAR).is_file():
            msg = f"Maven exited 0 but left no {_APP_FOLDER}/{_RUN_JAR} in {project / 'target'}"
            raise SchemaRegistryBuildError(msg, command=command)
        shutil.rmtree(target / _APP_FOLDER, ignore_errors=True)
        os.replace(built, target / _APP_FOLDER)


def _run_maven(command: list[str], project: Path) -> None:
    """Run the build; raise a :class:`SchemaRegistryBuildError` that says what went wrong."""
    try:
        finished = run_captured(command, cwd=project, timeout_s=_BUILD_TIMEOUT_S)
    except OSError as error:
        msg = f"could not run Maven ({command[0]}): {error}"
        raise SchemaRegistryBuildError(msg, command=command) from error
    if finished.returncode == 0:
        return
    tail = "\n".join(last_lines(finished.output, _OUTPUT_TAIL_LINES))
    what = f"Apicurio Registry {APICURIO_VERSION}"
    if finished.timed_out:
        msg = f"Maven did not build {what} within {_BUILD_TIMEOUT_S:.0f} s"
    elif _NETWORK_FAILURE.search(tail):
        msg = (
            f"Maven could not download {what} (exit code {finished.returncode}): check the "
            "network access to Maven Central; behind a proxy, give Maven its address in "
            "~/.m2/settings.xml or MAVEN_OPTS='-Dhttps.proxyHost=HOST -Dhttps.proxyPort=PORT'"
        )
    else:
        msg = f"Maven failed to build {what} (exit code {finished.returncode})"
    message = (
        f"{msg}\ncommand: {shown_command(command)} (in {project})\n"
        f"last lines of its output:\n{tail or '(no output)'}"
    )
    raise SchemaRegistryBuildError(message, tail, command)
