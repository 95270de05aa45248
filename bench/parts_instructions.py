"""What each part of the gateway costs a request, in instructions: bench/gateway_inprocess.py under valgrind with parts
taken away, one at a time and all at once, as bench/gateway_parts.py takes them away from a served gateway (there
timed under wrk, here counted, which a shared machine does not move): `metrics` (make_app's, off), `ledger` (rows
built but neither written nor waited for), `deadlines` (the silence deadlines, `watch`, not armed), `disconnect` (no
watching for a client that leaves). Each count is the difference between a short and a long run, over the difference
in requests, so start-up and warm-up cancel out.

Run: `python bench/parts_instructions.py [MODE]` (MODE of gateway_inprocess.py, default whole20; about six minutes on
two cores).
"""
import concurrent.futures, os, re, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).parent
VARIANTS = ('', 'metrics', 'ledger', 'deadlines', 'disconnect', 'metrics,ledger,deadlines,disconnect')
RUNS = (100, 600)   # requests in the short and the long run

def run(mode:str, n:int, parts:set):
    "bench/gateway_inprocess.py's run of `n` requests in `mode`, without `parts`."
    sys.path.insert(0, str(HERE))
    import gateway_inprocess as g
    import ramabana.doors as doors, ramabana.gateway as gateway
    from ramabana.ledger import Ledger
    if 'metrics' in parts:
        made = g.make_app
        g.make_app = lambda gw: made(gw, metrics=False)
    if 'ledger' in parts: Ledger.record = lambda self, row: 0   # ticket 0: `committed` is True at once
    if 'deadlines' in parts: gateway.watch = lambda agen, *a, **kw: agen
    if 'disconnect' in parts:
        async def unless_gone(request, aw): return True, await aw
        doors.unless_gone = unless_gone
    g.main(mode, n)

def count(mode:str, n:int, parts:str) -> int:
    "Instructions valgrind counts for `run(mode, n, parts)`."
    out = Path(tempfile.mkdtemp())/'cg.out'
    try:
        res = subprocess.run(['valgrind', '--tool=callgrind', f'--callgrind-out-file={out}', sys.executable, __file__,
                              '--run', mode, str(n), parts], cwd=HERE, capture_output=True, text=True,
                             env={**os.environ, 'PYTHONPATH': str(HERE.parent)})
        if res.returncode: raise SystemExit(f'{mode} {n} without {parts!r} failed:\n{res.stderr[-2000:]}')
        return int(re.search(r'Collected : (\d+)', res.stderr)[1])
    finally:
        out.unlink(missing_ok=True); out.parent.rmdir()

def main(mode:str):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = {(v, n): pool.submit(count, mode, n, v) for v in VARIANTS for n in RUNS}
        print(f'| {mode}: taken away | instructions a request | saved |\n|---|---|---|')
        base = None
        for v in VARIANTS:
            per = (runs[v, RUNS[1]].result() - runs[v, RUNS[0]].result()) / (RUNS[1] - RUNS[0])
            base = base or per
            print(f'| {v.replace(",", ", ") or "nothing"} | {per / 1e6:.3f} M | {(base - per) / 1e6:.3f} M ({(base - per) / base:.0%}) |',
                  flush=True)

if __name__ == '__main__':
    if sys.argv[1:2] == ['--run']: run(sys.argv[2], int(sys.argv[3]), set(filter(None, sys.argv[4].split(','))))
    else: main(sys.argv[1] if len(sys.argv) > 1 else 'whole20')
