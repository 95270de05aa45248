import os, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Tools installed beside this Python (nbdev-test, jupyter) must be found by the subprocesses tests start.
os.environ['PATH'] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get('PATH', '')
