"""A venv holding only what `pip install ramabana` installs, for tests/test_wheel.py.

`./dev setup` makes it (from PyPI, once per change of the dependencies in pyproject.toml); the test installs the freshly
built wheel into it with `--no-deps --no-index`, so it runs offline, and `pip check` proves the declared dependencies are
enough: the venv holds those and nothing else.

    python tools/freshvenv.py VENV   # make VENV unless it is already for these dependencies
"""
import hashlib, json, shutil, subprocess, sys
from pathlib import Path
try: import tomllib
except ModuleNotFoundError: import tomli as tomllib   # Python 3.10

ROOT = Path(__file__).resolve().parent.parent
KEY_FILE = '.ramabana-deps'   # in the venv: the key of the dependencies it was made for

def dependencies(pyproject:Path=ROOT/'pyproject.toml') -> list[str]:
    "The core dependencies `pip install ramabana` installs (no extras)."
    return tomllib.loads(pyproject.read_text())['project']['dependencies']

def key(pyproject:Path=ROOT/'pyproject.toml') -> str:
    "What the venv depends on: the dependencies and this Python's version."
    return hashlib.sha256(json.dumps([dependencies(pyproject), sys.version_info[:2]]).encode()).hexdigest()[:16]

def current(venv:Path) -> bool:
    "True when `venv` was made for the dependencies pyproject.toml declares now."
    f = Path(venv)/KEY_FILE
    return (Path(venv)/'bin'/'python').exists() and f.exists() and f.read_text().strip() == key()

def make(venv:Path) -> bool:
    "Make `venv` with the core dependencies from the package index, unless it is current; True when it was made."
    venv = Path(venv)
    if current(venv): return False
    if venv.exists(): shutil.rmtree(venv)
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    subprocess.run([str(venv/'bin'/'python'), '-m', 'pip', 'install', '-q', '--disable-pip-version-check', *dependencies()], check=True)
    (venv/KEY_FILE).write_text(key() + '\n')
    return True

if __name__ == '__main__':
    if len(sys.argv) != 2: sys.exit(__doc__)
    if make(Path(sys.argv[1])): print(f'./dev: made {sys.argv[1]}, the venv `pip install ramabana` gives (tests/test_wheel.py)')
