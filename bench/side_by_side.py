"""Two versions of the gateway in front of one fake upstream, measured in turn in the same minutes: what each adds to
the p50 of a 4-chunk stream and to each chunk of a 4,000-chunk stream (64 events a write), and the CPU its process
spent, against going direct. On a machine whose speed moves by 20 to 30% within minutes, only such a side-by-side
comparison says whether a change helped.

Run: `python bench/side_by_side.py OLD_TREE [ROUNDS]` (OLD_TREE: e.g. `git worktree add /tmp/old REV`; this checkout
is the new one; default 5 rounds, about two minutes). Each round measures direct, then old, then new.
"""
import signal, statistics, sys
from pathlib import Path
from harness import cpu_seconds, free_port, latency, relay, start

def main(old:str, rounds:int=5):
    trees = {'old': Path(old).resolve(), 'new': Path(__file__).resolve().parent.parent}
    up_port = free_port()
    up = f'http://127.0.0.1:{up_port}'
    procs = [start(['--serve-upstream', str(up_port)], up + '/health')]
    gws = {}
    try:
        for name, tree in trees.items():
            port = free_port()
            served = tree/'bench'/'harness.py'   # a tree from before the harness served its gateway from gateway_overhead.py
            served = served if served.is_file() else tree/'bench'/'gateway_overhead.py'
            p = start(['--serve-gateway', str(port), up], f'http://127.0.0.1:{port}/health', env={'PYTHONPATH': str(tree)},
                      script=str(served))
            procs.append(p)
            gws[name] = p, f'http://127.0.0.1:{port}/v1/chat/completions'
        direct, got = up + '/v1/chat/completions', {(k, m): [] for k in gws for m in ('p50', 'chunk')}
        for _ in range(rounds):
            base_p50, base_relay = latency(direct, {}, 400)[0], relay(direct, {}, reps=3)
            for name, (p, url) in gws.items():
                latency(url, {}, 50)   # warm
                c = cpu_seconds(p.pid); p50 = latency(url, {}, 400)[0]; c = cpu_seconds(p.pid) - c
                got[name, 'p50'].append(((p50 - base_p50) * 1e3, c / 420 * 1e3))   # latency sends 20 more to warm up
                c = cpu_seconds(p.pid); r = relay(url, {}, reps=3); c = cpu_seconds(p.pid) - c
                got[name, 'chunk'].append(((r - base_relay) / 4000 * 1e6, c / 4 / 4000 * 1e6))   # relay sends one more
    finally:
        for p in procs: p.send_signal(signal.SIGINT)
        for p in procs: p.wait(10)
    print(f'old = {trees["old"]}, new = {trees["new"]}; {rounds} rounds, medians (best)\n')
    print('| | added p50, 4-chunk stream | its CPU a request | added a chunk, 64 a write | its CPU a chunk |\n|---|---|---|---|---|')
    for name in gws:
        (a, ca), (b, cb) = zip(*got[name, 'p50']), zip(*got[name, 'chunk'])
        print(f'| {name} | {statistics.median(a):.2f} ms ({min(a):.2f}) | {statistics.median(ca):.2f} ms | '
              f'{statistics.median(b):.1f} µs ({min(b):.1f}) | {statistics.median(cb):.1f} µs |')

if __name__ == '__main__':
    if len(sys.argv) not in (2, 3): raise SystemExit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
