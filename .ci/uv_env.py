"""pip's configuration on this machine, as the environment variables uv reads: one NAME=value a line.

    python3 .ci/uv_env.py

.ci/run installs the venvs that are CI's own with uv (the README's command and the plain install
stay pip's). uv reads neither pip.conf nor the PIP_* variables, so this hands it the indexes,
links, constraints and certificates that `pip config list` shows: uv then installs from where
pip would, within the same caps. Where pip has no such settings it prints nothing, and uv uses
PyPI, as pip does. The standard library only.
"""

from __future__ import annotations

import ast
import subprocess
import sys

# pip's setting -> uv's variable (uv's documented names), and how uv separates several values.
UV_NAMES = {
    "index-url": "UV_DEFAULT_INDEX",
    "extra-index-url": "UV_INDEX",
    "find-links": "UV_FIND_LINKS",
    "constraint": "UV_CONSTRAINT",
    "cert": "SSL_CERT_FILE",
}
SEPARATORS = {"UV_FIND_LINKS": ","}
SECTIONS = (":env:", "global", "install")


def settings(pip_config: str) -> dict[str, list[str]]:
    """uv's variable -> values, from the lines of `pip config list` (`section.name='value'`)."""
    found: dict[str, list[str]] = {}
    for line in pip_config.splitlines():
        key, _, value = line.partition("=")
        section, _, name = key.rpartition(".")
        if section not in SECTIONS or name not in UV_NAMES or not value:
            continue
        values = found.setdefault(UV_NAMES[name], [])
        values += [v for v in ast.literal_eval(value).split() if v not in values]
    return found


def main() -> int:
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    found = settings(listed.stdout)
    for name, values in found.items():
        print(f"{name}={SEPARATORS.get(name, ' ').join(values)}")
    if "UV_INDEX" in found:
        # pip takes the best version any of its indexes has; uv, by default, the first index's.
        print("UV_INDEX_STRATEGY=unsafe-best-match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
