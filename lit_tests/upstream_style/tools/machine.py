"""The host's architecture as LLVM triples spell it."""

import platform

ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


def llvm_arch() -> str:
    machine = platform.machine().lower()
    return ARCH.get(machine, machine)


if __name__ == "__main__":
    import sys

    # What a RUN line's %if target=... picked, against this host.
    picked = sys.argv[1]
    print(
        "the target is this host's architecture"
        if picked == llvm_arch()
        else f"target {picked!r}, host {llvm_arch()!r}"
    )
