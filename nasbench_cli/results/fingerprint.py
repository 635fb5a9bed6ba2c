"""What a trial's result depends on besides its spec and data: nasbench's own code, the Python version and
the numerical libraries' versions. Two processes with the same fingerprint give byte-identical records."""
import functools
import hashlib
import platform
from pathlib import Path

PACKAGES = ("benchmarks", "optimizers", "nasbench_cli")


@functools.lru_cache(maxsize=1)
def code_sha256() -> str:
    """SHA-256 over the source of nasbench's packages (relative path and bytes of every .py file)."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def environment_fingerprint() -> dict:
    """{"python": "3.12", "code": sha256, "versions": {package: version}} of this process."""
    from nasbench_cli.results.record import package_versions

    versions = {k: v for k, v in package_versions().items() if k != "nasbench"}
    return {"python": ".".join(platform.python_version_tuple()[:2]), "code": code_sha256(), "versions": versions}


def fingerprint_difference(expected: dict, actual: dict) -> str | None:
    """The first difference between two fingerprints, in words, or None if they are the same."""
    if expected["python"] != actual["python"]:
        return f"Python {actual['python']} there, {expected['python']} here"
    if expected["code"] != actual["code"]:
        return (f"other nasbench code (source sha256 {actual['code'][:12]} there, {expected['code'][:12]} here); "
                "install the same nasbench commit on the workers")
    for package in sorted(set(expected["versions"]) | set(actual["versions"])):
        here, there = expected["versions"].get(package), actual["versions"].get(package)
        if here != there:
            return f"{package} {there or 'not installed'} there, {here or 'not installed'} here"
    return None
