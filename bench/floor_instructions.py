"""The gateway against its two floors in instructions: bench/gateway_inprocess.py's whole answers run under valgrind
for the gateway, the essentials and the bare proxy (harness.py's `essentials_app` and `proxy_app`, called over
the same raw ASGI), with the CPU the process (every thread of it) took a request beside them, user and system apart.

Each count is the difference between a short and a long run over the difference in requests (start-up and warm-up
cancel out); the CPU comes from /proc, in a run of its own without valgrind, so it moves with the machine as counts do
not. Instructions are the process's own work in user space; the system column is the kernel's work for it (sockets,
the ledger's file), which valgrind does not see.

Run: `python bench/floor_instructions.py [MODE]` (MODE of gateway_inprocess.py, default whole; about four minutes).
"""
import concurrent.futures, os, subprocess, sys
from pathlib import Path
from gateway_inprocess import APPS
from instructions import counted

HERE = Path(__file__).parent
RUNS = (100, 600)   # requests in the short and the long run

def per_request(mode:str, which:str, pool) -> float:
    "Instructions one request of `mode` costs `which` (one of APPS)."
    a, b = pool.map(lambda n: counted([HERE/'gateway_inprocess.py', mode, n, which], HERE.parent), RUNS)
    return (b - a) / (RUNS[1] - RUNS[0])

def cpu_run(mode:str, which:str, n:int=4000):
    "In a process of its own: `n` requests of `mode` to `which` after a first run, and the CPU they took, user and system."
    import gateway_inprocess as g
    made = g.run
    async def run(mode, n, url, which):
        await made(mode, 200, url, which)   # connections, caches, the first rows
        before = os.times()   # the process's, every thread's time in it (the ledger's writer too)
        await made(mode, n, url, which)
        after = os.times()
        print(f'{(after.user - before.user) / n * 1e6:.1f} {(after.system - before.system) / n * 1e6:.1f}')
    g.run = run
    g.main(mode, n, which)

def cpu(mode:str, which:str) -> tuple[float, float]:
    "(user, system) µs a request of `which`, from `cpu_run` in a process of its own."
    out = subprocess.run([sys.executable, __file__, '--cpu', mode, which], capture_output=True, text=True, check=True, cwd=HERE)
    return tuple(map(float, out.stdout.split()[-2:]))

def main(mode:str):
    with concurrent.futures.ThreadPoolExecutor(2) as pool: counts = {w: per_request(mode, w, pool) for w in APPS}
    times = {w: cpu(mode, w) for w in APPS}
    g = counts['gateway']
    print(f'| {mode} | instructions a request | gateway / this | user CPU µs | system CPU µs |\n|---|---|---|---|---|')
    for w in APPS:
        print(f'| {w} | {counts[w] / 1e6:.3f} M | {g / counts[w]:.2f} | {times[w][0]:.0f} | {times[w][1]:.0f} |')

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--cpu': cpu_run(sys.argv[2], sys.argv[3])
    else: main(sys.argv[1] if len(sys.argv) > 1 else 'whole')
