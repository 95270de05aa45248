"""Move the clock of every Python process in a test run: `./dev test --clock +365d`.

`./dev test --clock OFFSET` puts a `.pth` file in the venv that runs this file when Python starts, and sets
`RAMABANA_TEST_CLOCK=OFFSET` for the run. Each Python process (pytest, nbdev-test, the kernels and CLI subprocesses
they start) then sees the real time moved by OFFSET through time-machine: `time.time`, `datetime.now`, `date.today`
and the rest of the wall clock. The monotonic clock and native programs (llama-server) keep the real time, which is
what a test of "any day" needs: nothing in Python may compare its wall clock with theirs.

OFFSET is a signed number with a unit: `+365d`, `-1d`, `+12h`, `-90m`, `+30s`. Without the variable this does nothing.
`python tools/testclock.py --install` writes the `.pth` file into the running Python's site-packages.
"""
import os, re, sys

UNITS = dict(s=1, m=60, h=3600, d=86400)

def offset_seconds(spec:str) -> float:
    "Seconds in an offset such as `+365d` or `-1d`; a `ValueError` naming the offset otherwise."
    m = re.fullmatch(r'([+-])(\d+(?:\.\d+)?)([smhd])', spec.strip())
    if not m: raise ValueError(f'RAMABANA_TEST_CLOCK={spec!r}: an offset is a sign, a number and a unit, e.g. +365d, -1d, +12h')
    return (1 if m[1] == '+' else -1) * float(m[2]) * UNITS[m[3]]

def start(spec:str):
    "Move this process's wall clock by `spec` from now, once; it goes on ticking."
    if getattr(sys, '_ramabana_clock', None): return   # site reads a venv's .pth files twice: move the clock only once
    import time, time_machine
    time_machine.travel(time.time() + offset_seconds(spec), tick=True).start()
    sys._ramabana_clock = spec

if __name__ != '__main__' and (_spec := os.environ.get('RAMABANA_TEST_CLOCK')):
    try: start(_spec)
    except (ValueError, ImportError) as e:   # say it once and stop: a run on the real clock would pass for what it is not
        sys.stderr.write(f'testclock: {e}\n'); os._exit(2)

def install() -> str:
    "Write the `.pth` file that runs this file at start-up into this Python's site-packages; its path."
    import sysconfig
    from pathlib import Path
    pth = Path(sysconfig.get_path('purelib'))/'ramabana_testclock.pth'
    pth.write_text(f"import os, runpy; os.environ.get('RAMABANA_TEST_CLOCK') and runpy.run_path({str(Path(__file__).resolve())!r})\n")
    return str(pth)

if __name__ == '__main__':
    if sys.argv[1:] != ['--install']: sys.exit(__doc__)
    print(install())
