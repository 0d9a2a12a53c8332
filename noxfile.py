"""Sessions: tests (every interpreter found), matrix (interpreter x backend), report, lint.

Interpreter discovery works both where `python3.X` is on PATH and where the
interpreters sit in pyenv's versions folder without being activated: when
pyenv is present, PYENV_VERSION is set to every installed version so that the
`python3.X` shims resolve (this changes nothing for machines without pyenv).

CPython 3.14 and 3.15 are provisioned by the project where no interpreter for
them is found (`python -m matrix interpreters --install`, from Debian's
packages into `.cache/interpreters/`), so `nox -s tests` / `nox -s matrix` need
no other set-up; `TRACEMATRIX_PROVISION=0` turns that off (they are then
"missing" unless installed otherwise).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import nox

ROOT = Path(__file__).resolve().parent
CANDIDATES = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
# Versions the project installs itself where missing (no download host for them here).
PROVISIONED = ["3.14", "3.15"]
CACHE = ROOT / ".cache"

# Keep tool caches inside the project's ignored folders, never shared defaults.
os.environ.setdefault("UV_CACHE_DIR", str(CACHE / "uv"))
os.environ.setdefault("TRITON_CACHE_DIR", str(CACHE / "triton"))

nox.options.default_venv_backend = "uv|venv" if shutil.which("uv") else "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]


def _pyenv_versions() -> List[str]:
    root = os.environ.get("PYENV_ROOT") or (
        subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        if shutil.which("pyenv") else "")
    versions_dir = Path(root) / "versions" if root else None
    if not versions_dir or not versions_dir.is_dir():
        return []
    return sorted(p.name for p in versions_dir.iterdir()
                  if re.fullmatch(r"3\.\d+\.\d+", p.name) and (p / "bin" / "python").exists())


def _works(command: str) -> bool:
    exe = shutil.which(command)
    if not exe:
        return False
    try:
        return subprocess.run([exe, "-c", "import sys"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _provision_missing() -> None:
    """Put the project's interpreters on PATH (nox finds `python3.X` there), installing missing ones."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from matrix import interpreters

    os.environ["PATH"] = f"{interpreters.shim_dir()}{os.pathsep}{os.environ.get('PATH', '')}"
    missing = [v for v in PROVISIONED if not _works(f"python{v}")]
    if not missing or os.environ.get("TRACEMATRIX_PROVISION") == "0":
        return
    print(f"tracematrix: provisioning {', '.join(missing)} into {interpreters.CACHE_ROOT}")
    try:
        interpreters.install(missing, log=lambda line: print(f"tracematrix:   {line}"))
    except interpreters.ProvisionError as err:
        print(f"tracematrix: {err}\ntracematrix: going on without {', '.join(missing)}")
    interpreters.shim_dir()


def discover() -> Dict[str, List[str]]:
    """Which CPython 3.8+ interpreters this machine has, as nox version strings."""
    installed = _pyenv_versions()
    if installed:
        os.environ["PYENV_VERSION"] = ":".join(installed)
    _provision_missing()
    found = [v for v in CANDIDATES if _works(f"python{v}")]
    return {"found": found, "missing": [v for v in CANDIDATES if v not in found]}


INTERPRETERS = discover()
if not os.environ.get("_TRACEMATRIX_DISCOVERY_PRINTED"):
    os.environ["_TRACEMATRIX_DISCOVERY_PRINTED"] = "1"
    print(f"tracematrix: interpreters found: {', '.join(INTERPRETERS['found']) or 'none'}; "
          f"missing: {', '.join(INTERPRETERS['missing']) or 'none'}")
PYTHONS = INTERPRETERS["found"] or ["3"]


def _install(session: nox.Session, extras: str) -> None:
    session.install("-e", f".[{extras}]")


# The Dynamo subject: the suite through torch.compile(backend="eager"). torch is never a
# dependency of the project; it is installed into this session's venv only from a local
# CPU wheel of exactly this version (TRACEMATRIX_TORCH_WHEELS, default /opt/wheels: a loose
# spec would fetch a multi-GB CUDA build). Where there is no wheel for the interpreter the
# cell is "subject unavailable" (visible in the report), never a crash.
TORCH_VERSION = "2.13.0"
TORCH_WHEELS = Path(os.environ.get("TRACEMATRIX_TORCH_WHEELS", "/opt/wheels"))


def _torch_wheel(python: str) -> str:
    """The local torch wheel for this interpreter ('' when there is none)."""
    tag = "cp" + python.replace(".", "")
    found = sorted(TORCH_WHEELS.glob(f"torch-{TORCH_VERSION}+cpu-{tag}-{tag}-*.whl")) if TORCH_WHEELS.is_dir() else []
    return str(found[0]) if found else ""


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The pytest suite on one interpreter (nox runs it on every interpreter found).

    With the report extra (pandas, jinja2) and the gpu extra (Triton: its kernels
    are compiled ahead of time and run in interpreter mode without a GPU), the
    service extra and the cpu extra (numba: the numpy backend's numba loops are tested
    next to its pure-NumPy path), so no test skips for a missing package; and torch where
    its local CPU wheel fits this interpreter, so the Dynamo subject's tests run against a
    real Dynamo."""
    _install(session, "test,report,gpu,service,cpu")
    if _torch_wheel(str(session.python)):
        session.install("--find-links", str(TORCH_WHEELS), f"torch=={TORCH_VERSION}")
    args = session.posargs or ["-n", "2", "-q"]
    session.run("python", "-m", "pytest", *args,
                env={"TRITON_CACHE_DIR": str(CACHE / "triton" / session.name)})


# --------------------------------------------------------------------------- the matrix
# `nox -s matrix`: one session per interpreter found x backend writes a cell file, and one
# `cpython_tests` session per interpreter the cpython-tests cell (CPython's Lib/test under
# the compiler); then `report` (notified) merges them into reports/index.html and fails,
# after rendering, if any cell regressed against its baseline or failed, or any Lib/test
# module regressed, crashed or timed out.
# `nox -s matrix -- --accept` rewrites matrix/baselines/ from this run, on purpose.
# `nox -s nightly`: the same cells against NumPy's newest pre-release (reports/nightly/).
# `nox -s matrix -- --upload URL [--token-file FILE]` also posts this run's cells to the
# results service (`python -m matrix serve`) after the report, regressions or not.
BACKENDS = ["eager", "numpy", "triton"]
REPORTS = ROOT / "reports"
# NumPy's nightly wheels; `--pre` alone would only find release candidates on PyPI.
NUMPY_NIGHTLY_INDEX = os.environ.get(
    "TRACEMATRIX_NUMPY_INDEX", "https://pypi.anaconda.org/scientific-python-nightly-wheels/simple")
# Shared by every cell of one nox invocation; the report merges only that run's cells.
RUN_ID = os.environ.setdefault(
    "TRACEMATRIX_RUN_ID", f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}")
# Results folder -> report folder, for each kind of cell session that ran in this invocation.
_CELLS_RAN: Dict[Path, Path] = {}
REPORT_PYTHON = PYTHONS[-1]


def _install_once(session: nox.Session, extras: str) -> None:
    """`_install`, skipped when this venv already has the same pyproject.toml and extras
    (a warm `nox -s matrix` then spends its time on the cells, not on 18 editable builds)."""
    stamp_text = f"{extras} {(ROOT / 'pyproject.toml').read_text()}"
    location = getattr(session.virtualenv, "location", None)
    stamp = Path(location) / ".tracematrix-install" if location else None
    if stamp is not None and stamp.exists() and stamp.read_text() == stamp_text:
        return
    _install(session, extras)
    if stamp is not None:
        stamp.write_text(stamp_text)


def _install_numpy_pre_release(session: nox.Session) -> None:
    """NumPy's nightly wheel, else PyPI's newest pre-release (release candidates), else the
    release already installed; the cell's environment records which NumPy ran."""
    attempts = [("the nightly wheels", ["--extra-index-url", NUMPY_NIGHTLY_INDEX]), ("PyPI", [])]
    for where, index in attempts:
        try:
            session.install("--pre", "--upgrade", *index, "numpy")
            return
        except nox.command.CommandFailed:
            session.warn(f"no NumPy pre-release from {where} for Python {session.python} (see above)")
    session.warn("this nightly cell runs the NumPy release already installed")


def _cell(session: nox.Session, backend: str, results: Path, out: Path, *, nightly: bool = False,
          subject: str = "tracematrix") -> None:
    """Run one cell; exits 0 whatever the metrics say (the report session judges)."""
    from matrix.schema import cell_name  # standard library only; the path is set by discover()

    # The cell runner needs numpy and the project only; the triton cell also Triton.
    extras = "gpu" if backend == "triton" and not os.environ.get("TRACEMATRIX_NO_TRITON") else ""
    _install_once(session, extras)
    if nightly:
        _install_numpy_pre_release(session)
    _CELLS_RAN[results] = out
    session.notify("report")
    args = ["python", "-m", "matrix", "run", "--subject", subject, "--backend", backend,
            "--out", str(results / f"{cell_name(str(session.python), backend, subject)}.json")]
    if backend != BACKENDS[0] or subject != "tracematrix":
        # opcode coverage is per interpreter: recorded once, by the project's eager cell
        args.append("--no-coverage")
    if "--accept" in session.posargs:
        if nightly:
            session.error("--accept is for `nox -s matrix`; nightly cells never rewrite baselines")
        args.append("--accept")
    session.run(*args, env={"TRITON_CACHE_DIR": str(CACHE / "triton" / session.name)})


@nox.session(python=PYTHONS)
@nox.parametrize("backend", BACKENDS)
def matrix(session: nox.Session, backend: str) -> None:
    """One cell of the IR-count matrix (this interpreter x backend); `report` follows, and
    (once per interpreter) the cpython-tests cell and the Dynamo subject's cell."""
    if backend == BACKENDS[0]:
        session.notify(f"cpython_tests-{session.python}")
        session.notify(f"matrix_dynamo-{session.python}")
    _cell(session, backend, REPORTS / "results", REPORTS)


@nox.session(python=PYTHONS)
def matrix_dynamo(session: nox.Session) -> None:
    """The Dynamo subject's cell on this interpreter (`<python>-dynamo-eager.json`): torch
    from the local wheel where there is one, else a "subject unavailable" cell."""
    if _torch_wheel(str(session.python)):
        _install_once(session, "")
        session.install("--find-links", str(TORCH_WHEELS), f"torch=={TORCH_VERSION}")
    else:
        session.warn(f"no torch {TORCH_VERSION} CPU wheel for Python {session.python} in {TORCH_WHEELS}: "
                     "the Dynamo cell will say 'subject unavailable'")
    _cell(session, "eager", REPORTS / "results", REPORTS, subject="dynamo")


@nox.session(python=PYTHONS)
def cpython_tests(session: nox.Session) -> None:
    """CPython's own Lib/test (the suite's default module list) on this interpreter, plainly
    and with every test method compiled: the cell `<python>-cpython-tests.json`; exits 0
    whatever it finds (the report session judges).  `nox -s matrix` runs it per interpreter."""
    _install_once(session, "")
    results = REPORTS / "results"
    _CELLS_RAN[results] = REPORTS
    session.notify("report")
    session.run("python", "-m", "matrix", "cpython-tests", "--quiet",
                "--json", str(results / f"{session.python}-cpython-tests.json"), success_codes=[0, 1])


@nox.session(python=PYTHONS)
def project_tests(session: nox.Session) -> None:
    """This project's own pytest suite on this interpreter, plainly and with every test
    function compiled (`python -m matrix project-tests`): the cell
    `reports/results/<python>-project-tests.json`; exits 1 when a test behaves differently
    compiled.  Positional arguments choose the tests (default: all of them)."""
    _install_once(session, "test,report,gpu,service,cpu")
    results = REPORTS / "results"
    results.mkdir(parents=True, exist_ok=True)
    session.run("python", "-m", "matrix", "project-tests", "--jobs", "2",
                "--json", str(results / f"{session.python}-project-tests.json"), *session.posargs,
                env={"TRITON_CACHE_DIR": str(CACHE / "triton" / session.name)})


@nox.session(python=PYTHONS)
@nox.parametrize("backend", BACKENDS)
def nightly(session: nox.Session, backend: str) -> None:
    """One cell against NumPy's newest pre-release (nightly wheels); report in reports/nightly/."""
    _cell(session, backend, REPORTS / "nightly" / "results", REPORTS / "nightly", nightly=True)


def _option(posargs: List[str], name: str) -> str:
    """The value after `name` in posargs ('' when absent)."""
    if name in posargs:
        index = posargs.index(name)
        if index + 1 < len(posargs):
            return posargs[index + 1]
    return ""


def _run_id_of(path: Path) -> str:
    try:
        return str(json.loads(path.read_text(encoding="utf-8")).get("run_id"))
    except (OSError, ValueError, AttributeError):
        return ""


def _upload(session: nox.Session, results: Path) -> None:
    """With `-- --upload URL`: post the cells of this run to the results service."""
    url = _option(session.posargs, "--upload")
    if not url:
        return
    token_file = (_option(session.posargs, "--token-file")
                  or os.environ.get("TRACEMATRIX_SERVICE_TOKEN_FILE", ""))
    if not token_file:
        session.error("--upload needs --token-file FILE (or TRACEMATRIX_SERVICE_TOKEN_FILE)")
    mine = [str(p) for p in sorted(results.glob("*.json")) if not _CELLS_RAN or _run_id_of(p) == RUN_ID]
    if mine:
        session.run("python", "-m", "matrix", "upload", *mine, "--url", url, "--token-file", token_file)


@nox.session(python=REPORT_PYTHON)
def report(session: nox.Session) -> None:
    """Merge the cells and render the report; fails after rendering on any regression or failure."""
    _install_once(session, "report")
    targets = dict(_CELLS_RAN) or {REPORTS / "results": REPORTS}
    failed = []
    for results, out in targets.items():
        args = ["python", "-m", "matrix", "report", *sorted(str(p) for p in results.glob("*.json")),
                "--out", str(out), "--backends", ",".join(BACKENDS)]
        args += [f"--missing={version}" for version in INTERPRETERS["missing"]]
        if _CELLS_RAN:  # cells of this invocation only, not stale files of an earlier run
            args += ["--run-id", RUN_ID]
        try:
            session.run(*args)
        except nox.command.CommandFailed:
            failed.append(str(out / "index.html"))
        _upload(session, results)
    if failed:
        session.error(f"regressions or failures; see {', '.join(failed)}")
