"""The CPython interpreters the project can use, and provisioning of missing ones.

``python -m matrix interpreters [--json]`` lists version -> interpreter from
three places, first found wins: pyenv's versions folder, ``python3.X`` on
``PATH``, and the trees this module installed under ``.cache/interpreters/``.
``python -m matrix interpreters --install 3.14 3.15`` provisions versions that
none of them has, from Debian's packages (``matrix.debian_python``), into
``.cache/interpreters/<version>/``; a version already usable is left alone.

A tree counts only when it carries the marker file, written just before the
tree is renamed into place, and its interpreter runs: an install that failed
half-way leaves nothing that a listing (or nox) would pick up.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence

from matrix import debian_python
from matrix.debian_python import ProvisionError

ROOT = Path(__file__).resolve().parent.parent
CACHE_ROOT = ROOT / ".cache" / "interpreters"
# Downloaded .debs, apt's private lists and the patchelf binary: kept between installs.
DOWNLOADS = ROOT / ".cache" / "debian"
# Symlinks python3.X -> each installed tree's interpreter, for PATH (nox finds them there).
SHIM_DIR_NAME = "bin"
_VERSION = re.compile(r"3\.\d+")
# The oldest version the project supports (pyproject's requires-python); older ones are not listed.
OLDEST = (3, 8)

Log = Callable[[str], None]


@dataclass(frozen=True)
class Found:
    """One usable interpreter."""

    version: str     # "3.14"
    path: str        # the executable
    origin: str      # "pyenv", "PATH" or "project"


def _version_key(version: str):
    return tuple(int(part) for part in version.split("."))


def _probe_version(executable: str) -> Optional[str]:
    """The interpreter's "3.X", or None when it does not run (a stale shim, a moved tree)."""
    try:
        done = subprocess.run([executable, "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and _VERSION.fullmatch(out) else None


# -- the three sources ---------------------------------------------------------------------------

def _pyenv_candidates() -> Iterator[Found]:
    root = os.environ.get("PYENV_ROOT")
    if not root and shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
    versions = Path(root or os.path.expanduser("~/.pyenv")) / "versions"
    if not versions.is_dir():
        return
    full = [p.name for p in versions.iterdir() if re.fullmatch(r"3\.\d+\.\d+", p.name)]
    for name in sorted(full, key=_version_key, reverse=True):  # newest patch release first
        minor = name.rsplit(".", 1)[0]
        yield Found(minor, str(versions / name / "bin" / f"python{minor}"), "pyenv")


def _path_candidates() -> Iterator[Found]:
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not os.path.isdir(directory) or "shims" in Path(directory).parts[-1:]:
            continue  # pyenv's shims only work for activated versions; its versions are read directly
        for name in sorted(os.listdir(directory)):
            match = re.fullmatch(r"python(3\.\d+)", name)
            if match:
                yield Found(match.group(1), os.path.join(directory, name), "PATH")


def tree_interpreter(root: Path, version: str) -> Path:
    return root / version / debian_python.relative_interpreter(version)


def _project_candidates(root: Path) -> Iterator[Found]:
    if not root.is_dir():
        return
    for tree in sorted(root.iterdir()):
        if _VERSION.fullmatch(tree.name) and (tree / debian_python.MARKER).is_file():
            yield Found(tree.name, str(tree_interpreter(root, tree.name)), "project")


def discover(root: Path = CACHE_ROOT) -> Dict[str, Found]:
    """version -> the first usable interpreter (pyenv, then PATH, then the project's trees)."""
    found: Dict[str, Found] = {}
    tried = set()
    for source in (_pyenv_candidates(), _path_candidates(), _project_candidates(root)):
        for candidate in source:
            if candidate.version in found or candidate.path in tried or _version_key(candidate.version) < OLDEST:
                continue
            tried.add(candidate.path)
            if os.access(candidate.path, os.X_OK) and _probe_version(candidate.path) == candidate.version:
                found[candidate.version] = candidate
    return dict(sorted(found.items(), key=lambda item: _version_key(item[0])))


def shim_dir(root: Path = CACHE_ROOT) -> Path:
    """A folder of ``python3.X`` links to the project's finished trees (for PATH), kept in step."""
    shims = root / SHIM_DIR_NAME
    shims.mkdir(parents=True, exist_ok=True)
    wanted = {f"python{f.version}": f.path for f in _project_candidates(root)}
    for link in shims.iterdir():
        if link.name not in wanted or os.readlink(link) != wanted[link.name]:
            link.unlink()
    for name, target in wanted.items():
        if not (shims / name).is_symlink():
            (shims / name).symlink_to(target)
    return shims


# -- installing ----------------------------------------------------------------------------------

@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One installer at a time per cache folder (nox sessions and a user may race)."""
    import fcntl
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_leftovers(root: Path, version: str, log: Log) -> None:
    """Trees of ``version`` that a listing would not use: unfinished (no marker) or not running."""
    for partial in root.glob(f".partial-{version}-*"):
        shutil.rmtree(partial, ignore_errors=True)
    tree = root / version
    if tree.exists():
        log(f"{version}: removing {tree} (unfinished or no longer runs, e.g. the checkout moved)")
        shutil.rmtree(tree)


class _Steps:
    """Runs named steps; a failure becomes a ProvisionError naming the step and what to do."""

    def __init__(self, version: str) -> None:
        self.version = version

    def __call__(self, name: str, action: Callable, *args, advice: str = "", **kwargs):
        try:
            return action(*args, **kwargs)
        except ProvisionError:
            raise
        except subprocess.CalledProcessError as err:
            detail = (err.stderr or err.stdout or "").strip() or f"exit status {err.returncode}"
            reason = f"{' '.join(map(str, err.cmd[:3]))}: {detail}"
        except Exception as err:  # any failing step: report it, never a bare traceback
            reason = f"{type(err).__name__}: {err}"
        raise ProvisionError(f"CPython {self.version}: step '{name}' failed: {reason}"
                             + (f"\n  what to do: {advice}" if advice else ""))


def _download(apt: debian_python.Apt, packages: List[str], into: Path) -> List[Path]:
    """The .debs of ``packages`` (candidate versions), fetching only those not already cached."""
    into.mkdir(parents=True, exist_ok=True)
    fields = apt.candidates(packages)
    wanted = {name: into / os.path.basename(fields[name]["Filename"]) for name in packages}
    missing = [name for name, path in wanted.items() if not path.is_file()]
    if missing:
        apt.download(missing, into)
    absent = [str(path) for path in wanted.values() if not path.is_file()]
    if absent:
        raise RuntimeError(f"apt-get download left no {', '.join(absent)}")
    return list(wanted.values())


def install_one(version: str, root: Path = CACHE_ROOT, downloads: Path = DOWNLOADS,
                log: Log = print) -> Path:
    """Provision CPython ``version`` into ``root/<version>``; returns its interpreter."""
    steps = _Steps(version)
    debian_python.check_host()
    _remove_leftovers(root, version, log)
    final = root / version
    staging = Path(tempfile.mkdtemp(prefix=f".partial-{version}-", dir=root))
    network = "check the network (Debian's archive must be reachable) and run the same command again"
    try:
        log(f"{version}: building in {staging}")
        apt = steps("apt configuration", debian_python.Apt, downloads / "apt", log)
        steps("apt-get update", apt.update, advice=network)
        packages = steps("resolve packages", debian_python.resolve_packages, apt, version)
        debs = steps("download", _download, apt, packages, downloads / "debs", advice=network)
        steps("extract", debian_python.extract, debs, staging, log,
              advice=f"check free space under {root}, then run again")
        tool = steps("patchelf", debian_python.patchelf, downloads / "tools", log)
        binary = staging / debian_python.relative_interpreter(version)
        steps("relink", debian_python.relink, binary, final, tool)
        full = steps("check the new interpreter", debian_python.probe, staging, version,
                     advice=f"see the error above; the packages stay cached in {downloads}", through_loader=True)
        (staging / debian_python.MARKER).write_text(json.dumps(
            {"version": version, "full_version": full, "source": f"Debian {debian_python.SUITE}",
             "packages": [p.name for p in debs], "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            indent=2) + "\n")
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        steps("check the installed interpreter", debian_python.probe, final, version, through_loader=False)
    except ProvisionError:
        shutil.rmtree(final, ignore_errors=True)
        raise
    shim_dir(root)
    log(f"{version}: installed CPython {full} -> {tree_interpreter(root, version)}")
    return tree_interpreter(root, version)


def install(versions: Sequence[str], root: Path = CACHE_ROOT, downloads: Path = DOWNLOADS,
            log: Log = print) -> Dict[str, str]:
    """Provision each version no source has yet; version -> interpreter.  Raises ProvisionError."""
    bad = [v for v in versions if not _VERSION.fullmatch(v)]
    if bad:
        raise ProvisionError(f"versions look like 3.14, got {', '.join(bad)}")
    with _locked(root):
        present = discover(root)
        result: Dict[str, str] = {}
        for version in versions:
            if version in present:
                log(f"{version}: already available ({present[version].origin}): {present[version].path}; "
                    "nothing to do")
                result[version] = present[version].path
            else:
                result[version] = str(install_one(version, root, downloads, log))
        return result


# -- command line --------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help='print {"3.8": "/path/to/python", ...}')
    parser.add_argument("--install", nargs="+", metavar="VERSION", default=None,
                        help="provision these versions (e.g. 3.14 3.15) into .cache/interpreters/ "
                             "where no interpreter is found; a second call does nothing")


def main(args: argparse.Namespace) -> int:
    if args.install:
        try:
            install(args.install)
        except ProvisionError as err:
            print(f"python -m matrix interpreters --install: {err}", file=sys.stderr)
            return 1
        if not args.json:
            return 0
    found = discover()
    if args.json:
        print(json.dumps({version: f.path for version, f in found.items()}, indent=2))
    else:
        for version, f in found.items():
            print(f"{version:6} {f.path}  ({f.origin})")
    return 0
