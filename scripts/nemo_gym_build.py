"""A PEP 517 / PEP 660 build backend for the `nemo_gym` Python package, in the standard library only,
so `pip install -e <repo>` (and `pip install <repo>`) work without fetching setuptools or wheel —
trainer images are often offline. Wheels are pure Python (py3-none-any); the editable install is a
`.pth` file naming the repository root, so `nemo_gym` is imported from the checkout and its root
(the folder above the package) is the project root RunHelper uses.
"""
import base64
import hashlib
import io
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "nemo_gym"
DIST = "nemo-gym"


def _version() -> str:
    text = (ROOT / NAME / "package_info.py").read_text()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def _metadata() -> str:
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {DIST}\n"
        f"Version: {_version()}\n"
        "Summary: The Python import surface NeMo-RL and VeRL use to drive NeMo Gym for TypeScript online (standard library only)\n"
        "License: Apache-2.0\n"
        "Requires-Python: >=3.10\n"
    )


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _write_wheel(wheel_directory: str, files: dict) -> str:
    """files: archive path -> bytes. Adds WHEEL, METADATA and RECORD."""
    info = _dist_info()
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: nemo_gym_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{NAME}-{_version()}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return name


def _package_files() -> dict:
    out = {}
    for p in sorted((ROOT / NAME).rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        out[p.relative_to(ROOT).as_posix()] = p.read_bytes()
    return out


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, {f"__editable__.{NAME}.pth": (str(ROOT) + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{_version()}"
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as tf:
        members = {"pyproject.toml": (ROOT / "pyproject.toml").read_bytes(), "scripts/nemo_gym_build.py": Path(__file__).read_bytes(), "PKG-INFO": _metadata().encode()}
        members.update(_package_files())
        for path, data in members.items():
            ti = tarfile.TarInfo(f"{base}/{path}")
            ti.size = len(data)
            ti.mode = 0o644
            tf.addfile(ti, io.BytesIO(data))
    return name
