"""Instructions a request costs the gateway, counted by valgrind rather than timed: on this shared machine the time a
request takes moves by 20 to 30% between runs minutes apart, while the count moves by well under 1%.

Run: `python bench/instructions.py OLD_TREE [NEW_TREE]` (NEW_TREE defaults to this checkout; make OLD_TREE with
`git worktree add /tmp/old REV`). For each tree and each mode of bench/gateway_inprocess.py (a whole 4-token answer,
a 64-token stream, whole answers 20 at a time), the in-process gateway runs under `valgrind --tool=callgrind` twice, with few and with many
requests; the difference over the difference in requests is what one request costs, start-up and warm-up cancelled
out. The fake upstream runs in its own process, outside valgrind. About four minutes on two cores.

What it counts is the gateway's own work in the CPU (Python and the C it calls); not the kernel's side of a socket,
nor cache misses. So it tells which of two versions does less, not how fast either is.
"""
import concurrent.futures, os, re, shutil, subprocess, sys, tempfile
from pathlib import Path

RUNS = {'whole': (100, 600), 'stream': (100, 400), 'whole20': (100, 600)}   # requests in the short and the long run, per mode
SAYS = {'whole': 'whole answer, 4 tokens', 'stream': 'stream, 64 tokens', 'whole20': 'whole answers, 20 at a time'}

def counted(args:list, tree:Path) -> int:
    "Instructions valgrind counts for `python ARGS` with `tree`'s ramabana first on the path, run in `tree`/bench."
    out = Path(tempfile.mkdtemp())/'cg.out'
    try:
        res = subprocess.run(['valgrind', '--tool=callgrind', f'--callgrind-out-file={out}', sys.executable, *map(str, args)],
                             cwd=tree/'bench', env={**os.environ, 'PYTHONPATH': str(tree)}, capture_output=True, text=True)
        if res.returncode: raise SystemExit(f'{tree}: {" ".join(map(str, args))} failed:\n{res.stderr[-2000:]}')
        return int(re.search(r'Collected : (\d+)', res.stderr)[1])
    finally: shutil.rmtree(out.parent)

def collected(tree:Path, mode:str, n:int) -> int:
    "Instructions valgrind counted for bench/gateway_inprocess.py MODE N run from `tree`."
    return counted([tree/'bench'/'gateway_inprocess.py', mode, n], tree)

def per_request(tree:Path, mode:str, pool) -> float:
    "Instructions one request of `mode` costs the gateway of `tree`."
    few, many = RUNS[mode]
    a, b = pool.map(lambda n: collected(tree, mode, n), (few, many))
    return (b - a) / (many - few)

def main(old:str, new:str):
    if not shutil.which('valgrind'): raise SystemExit('valgrind is not installed (Debian: apt-get install valgrind)')
    trees = {'old': Path(old).resolve(), 'new': Path(new).resolve()}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        got = {(k, m): per_request(t, m, pool) for k, t in trees.items() for m in RUNS}
    print(f'instructions a request, old = {trees["old"]}, new = {trees["new"]}\n')
    print('| request | old | new | new / old |\n|---|---|---|---|')
    for m in RUNS:
        o, n = got['old', m], got['new', m]
        print(f'| {SAYS[m]} | {o / 1e6:.3f} M | {n / 1e6:.3f} M | {n / o:.3f} |')

if __name__ == '__main__':
    if len(sys.argv) not in (2, 3): raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else str(Path(__file__).resolve().parent.parent))
