# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
import os

# scikit-learn's common checks include an array-API check that is skipped unless
# SciPy's array API mode is on; turn it on so that check runs instead of skipping.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.preprocessing import normalize  # noqa: E402


@pytest.fixture
def binary_data():
    X, y = make_classification(n_samples=300, n_features=8, n_informative=5,
                               random_state=0)
    return normalize(X), y


@pytest.fixture
def multiclass_data():
    X, y = make_classification(n_samples=400, n_features=10, n_informative=6,
                               n_classes=3, random_state=1)
    return normalize(X), y


@pytest.fixture
def regression_data():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(400, 5)) / np.sqrt(5)
    y = X @ np.array([1.0, -0.5, 0.25, 0.0, 0.8]) + 0.05 * rng.standard_normal(400)
    return X, y


# --- record stores on SQLite and PostgreSQL ---------------------------------------
# The store tests run on both backends. PostgreSQL comes from
# $SKFORGET_TEST_POSTGRES_URL (CI sets it, see .ci/run), or else from a
# throwaway cluster started here when the server binaries are installed
# (Debian package postgresql). Without either the PostgreSQL cases are skipped
# locally with the reason, and fail in CI (CI=true): no silent skip there.
import glob  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402


def _no_postgres(reason):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must test the PostgreSQL store: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL store not tested: {reason}")


def _pg_bindir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _throwaway_cluster():
    """Start a cluster in a temporary directory on a unix socket only; returns
    (url, stop). PostgreSQL refuses to run as root: as root, the cluster runs
    as the ``postgres`` user (``runuser``)."""
    bindir = _pg_bindir()
    if bindir is None:
        return None
    root = tempfile.mkdtemp(prefix="skforget-pg-")
    as_user = []
    if os.geteuid() == 0:
        import pwd

        user = "postgres"
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            pw = pwd.getpwnam("nobody")
        for path in (root,):
            os.chown(path, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", pw.pw_name, "--"]
    data, sock, log = (os.path.join(root, n) for n in ("data", "sock", "log"))

    def run(*cmd):
        subprocess.run([*as_user, *cmd], check=True, capture_output=True,
                       timeout=180)

    run("mkdir", sock)
    run(str(bindir / "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-N")
    run(str(bindir / "pg_ctl"), "-D", data, "-l", log, "-w", "-o",
        f"-k {sock} -h '' -p 5432 -F", "start")

    def stop():
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", data, "-m",
                        "immediate", "-w", "stop"], capture_output=True, timeout=120)
        shutil.rmtree(root, ignore_errors=True)

    return f"postgresql://postgres@/postgres?host={sock}&port=5432", stop


@pytest.fixture(scope="session")
def postgres_url():
    """A PostgreSQL database the tests may create schemas in."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _no_postgres("psycopg is not installed (pip install 'skforget[postgres]')")
    url = os.environ.get("SKFORGET_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    try:
        started = _throwaway_cluster()
    except (OSError, subprocess.SubprocessError) as exc:
        _no_postgres(f"could not start a throwaway cluster: {exc}")
    if started is None:
        _no_postgres("no server binaries (apt-get install postgresql) and "
                     "SKFORGET_TEST_POSTGRES_URL is not set")
    url, stop = started
    try:
        yield url
    finally:
        stop()


@pytest.fixture
def postgres_schema(postgres_url):
    """A URL whose current schema is new and empty (dropped afterwards)."""
    import psycopg

    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {name}")
    glue = "&" if "?" in postgres_url else "?"
    yield f"{postgres_url}{glue}options=-csearch_path%3D{name}"
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"DROP SCHEMA {name} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request, tmp_path):
    """Where to create a record store: a new SQLite file or an empty schema."""
    if request.param == "sqlite":
        return str(tmp_path / "service.sqlite")
    return request.getfixturevalue("postgres_schema")
