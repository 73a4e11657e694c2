"""The demo's dev PostgreSQL, run by the process runtime from the local server binaries.

First boot: initdb into a data directory kept per project checkout and port (outside the
checkout: PostgreSQL needs a directory its user owns), then the server runs in the foreground
on $PORT, loopback only. PostgreSQL refuses to run as root: as root it runs as `postgres`.
"""

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile


def main() -> None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres")) or [shutil.which("postgres") or ""]
    if not found[-1]:
        sys.exit("PostgreSQL server binaries are not installed (the postgresql package)")
    bindir = os.path.dirname(found[-1])
    port = os.environ.get("PORT", "55432")
    key = hashlib.sha1(f"{os.getcwd()}:{port}".encode()).hexdigest()[:12]
    home = os.path.join(tempfile.gettempdir(), "framework-dev-postgres", key)
    data = os.path.join(home, "data")
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    if not os.path.isfile(os.path.join(data, "PG_VERSION")):
        os.makedirs(home, exist_ok=True)
        if as_root:
            shutil.chown(home, "postgres", "postgres")
        subprocess.run([*prefix, os.path.join(bindir, "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
                        "--no-sync", "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL)
    argv = [*prefix, os.path.join(bindir, "postgres"), "-D", data, "-p", port, "-k", home,
            "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"]
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main()
