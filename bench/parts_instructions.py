"""What each part of the gateway costs a request, in instructions: bench/gateway_inprocess.py under valgrind with parts
taken away, one at a time and all at once, as bench/gateway_parts.py takes them away from a served gateway (there
timed under wrk, here counted, which a shared machine does not move): `metrics` (make_app's, off), `ledger` (rows
built but neither written nor waited for), `deadlines` (the silence deadlines, `watch`, not armed), `disconnect` (no
watching for a client that leaves). Each count is the difference between a short and a long run, over the difference
in requests, so start-up and warm-up cancel out.

Run: `python bench/parts_instructions.py [MODE]` (MODE of gateway_inprocess.py, default whole20; about six minutes on
two cores).
"""
import concurrent.futures, sys
from pathlib import Path
from gateway_parts import PARTS_TAKEN, without
from instructions import counted

HERE = Path(__file__).parent
VARIANTS = ('', *PARTS_TAKEN, ','.join(PARTS_TAKEN))
RUNS = (100, 600)   # requests in the short and the long run

def run(mode:str, n:int, parts:set):
    "bench/gateway_inprocess.py's run of `n` requests in `mode`, without `parts`."
    import gateway_inprocess as g
    without(parts)
    if 'metrics' in parts:
        made = g.make_app
        g.make_app = lambda gw: made(gw, metrics=False)
    g.main(mode, n)

def count(mode:str, n:int, parts:str) -> int:
    "Instructions valgrind counts for `run(mode, n, parts)`."
    return counted([Path(__file__).resolve(), '--run', mode, n, parts], HERE.parent)

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
