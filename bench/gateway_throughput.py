"""What the gateway can carry: requests per second under a real load generator, next to the same upstream called directly.

Run: `python bench/gateway_throughput.py` (about three minutes; five with `--litellm`, a minute more with `--portkey`;
installs Debian's `wrk` first when it is missing and this runs as root). The fake upstream and the gateway are `bench/harness.py`'s, as `bench/gateway_overhead.py`
runs them; two floors beside it: the bare proxy (bytes relayed) and the essentials (the bare proxy plus parsing the
request and every event, the whole answer written, a row committed to SQLite). On two cores the load generator gets core 1 and the servers core 0 (`taskset`), so direct and gateway rows
compare one server core each. For each path, answer kind (whole, or streamed with 64 tokens) and number of connections
(1, 20, 100) the table shows wrk's req/s, p50 and p99, the server's and the upstream's CPU seconds per 1,000 requests
(from /proc), and wrk's own CPU use, which says how far the generator was from being the limit.

Then the gateway, the bare proxy and LiteLLM at 1 and 2 workers (uvicorn's, for all three), unpinned, and for each
what 2 workers carry over 1 next to the most two cores allow: 2 / (CPU a request of the server, the upstream and wrk).

Peers, each started only after every row before it is measured, so it does not load the machine meanwhile:
`--litellm VENV` (a venv with litellm 1.110.2) and `--portkey DIR` (Portkey's OSS gateway, npm `@portkey-ai/gateway`
1.15.2 on Node 20, installed in DIR when missing; one process, pinned to core 0 with the upstream as the gateway's
rows are). For each, whole answers at 20 connections against the gateway's: req/s and server CPU an answer.
`--peers-only` measures the direct rows and the peers' alone (a quick check that a peer runs; no gateway, no ratios).
"""
import argparse, tempfile, time
from harness import (PORTKEY_VERSION, STREAM, WHOLE, cpu_seconds, ensure_wrk, free_port, machine_busy, pin, serve_workers, start,
                     start_litellm, start_portkey, stop, tree_cpu, wrk)


def measure(name, url, pid, kinds, conns_list, seconds, wrk_bin, prefix, rows, headers=None, upstream=None):
    "Rows of `name`: wrk's figures, and the CPU seconds per 1,000 requests of the server `pid` and of the `upstream` process."
    for kind, n, stream in kinds:
        body = {'model': 'fake', 'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': n, 'stream': stream}
        for conns in conns_list:
            wrk(url, body, conns, 1, wrk_bin, prefix, headers)   # warm up: connections, caches
            c0, u0, m0 = tree_cpu(pid) if pid else 0, cpu_seconds(upstream) if upstream else 0, machine_busy()
            t0 = time.perf_counter()
            rps, p50, p99, own = wrk(url, body, conns, seconds, wrk_bin, prefix, headers)
            wall = time.perf_counter() - t0
            c1, u1 = tree_cpu(pid) if pid else 0, cpu_seconds(upstream) if upstream else 0
            # cores the rest of the machine used meanwhile: this script's own and other people's work
            others = (machine_busy() - m0 - (c1 - c0) - (u1 - u0)) / wall - own if pid and upstream else None
            per_1k = lambda c: c / (rps * seconds) * 1000 if rps else None
            rows.append((name, kind, conns, rps, p50, p99, own, per_1k(c1 - c0) if pid else None,
                         per_1k(u1 - u0) if upstream else None, others))

SIZED = {'gateway': 'serve --workers {}', 'bare proxy': 'floor --workers {}', 'LiteLLM': 'LiteLLM --num_workers {}'}

def scaling(rows) -> dict:
    "For each server run at 1 and 2 workers: what 2 carry over 1, the most 2 cores allow, and the most the cores left by other processes allow; printed, and {(server, conns): (ratio, ceiling, left)}."
    at = {(r[0], r[2]): r for r in rows if r[1] == 'whole'}
    res = {}
    for label, name in SIZED.items():
        for c in (20, 100):
            one, two = at.get((name.format(1), c)), at.get((name.format(2), c))
            if not (one and two and one[3] and one[7] is not None and one[8] is not None): continue   # not run, or nothing answered
            # two cores shared by the server, the upstream and wrk: at best 2 / (their CPU seconds a request) req/s; less
            # what other processes took during the 2-worker run
            g, u, w = one[7], one[8], one[6] / one[3] * 1000   # CPU s per 1,000 requests: server, upstream, wrk
            cores = 2 - max(two[9] or 0, 0)
            ceiling, left = 2000 / (g + u + w) / one[3], cores * 1000 / (g + u + w) / one[3]
            print(f'{label}, {c} connections: 2 workers carry {two[3] / one[3]:.2f}x 1 worker; 2 cores allow at most '
                  f'{ceiling:.2f}x (2 cores / ({g:.2f} + {u:.2f} + {w:.2f}) CPU s per 1k requests of server, upstream and wrk), '
                  f'the {cores:.2f} cores other processes left during the 2-worker run {left:.2f}x')
            res[(label, c)] = (two[3] / one[3], ceiling, left)
    return res

PEERS = {'LiteLLM 1.110.2': 'LiteLLM', f'Portkey {PORTKEY_VERSION}': 'Portkey'}

def against_peers(rows):
    "The gateway's whole answers at 20 connections against each peer's that ran: req/s and server CPU an answer, printed."
    at = {(r[0], r[1], r[2]): r for r in rows}
    gw = at.get(('gateway', 'whole', 20))
    for name, label in PEERS.items():
        pr = at.get((name, 'whole', 20))
        if not (gw and pr and pr[3] and pr[7]): continue
        print(f'the gateway against {label}, whole answers at 20 connections: {gw[3]:.0f} / {pr[3]:.0f} req/s = {gw[3] / pr[3]:.2f}x; '
              f'server CPU an answer {gw[7]:.2f} / {pr[7]:.2f} ms = {gw[7] / pr[7]:.2f}x')

def main(seconds:int=5, litellm:str|None=None, portkey:str|None=None, peers_only:bool=False):
    "Print the throughput table (pinned direct / floor / gateway, then 1 and 2 workers unpinned, then the peers: LiteLLM, Portkey); (rows, `scaling`)."
    wrk_bin = ensure_wrk()
    up_port = free_port()
    up = f'http://127.0.0.1:{up_port}'
    rows, procs = [], [start(['--serve-upstream', str(up_port)], up + '/health', prefix=pin(0))]
    try:
        # one server core each: the upstream and the server measured share core 0, wrk has core 1
        measure('direct', up + '/v1/chat/completions', None, [WHOLE, STREAM], (1, 20, 100), seconds, wrk_bin, pin(1), rows)
        if not peers_only:
            port = free_port()
            fl = start(['--serve-proxy', str(port), up], f'http://127.0.0.1:{port}/health', prefix=pin(0))
            measure('floor: bare proxy', f'http://127.0.0.1:{port}/v1/chat/completions', fl.pid, [WHOLE], (1, 20, 100), seconds, wrk_bin, pin(1), rows)
            stop([fl])
            port = free_port()   # the bare proxy plus what any gateway doing this job does (harness.essentials_app)
            es = start(['--serve-essentials', str(port), up], f'http://127.0.0.1:{port}/health', prefix=pin(0))
            measure('floor: the essentials', f'http://127.0.0.1:{port}/v1/chat/completions', es.pid, [WHOLE], (1, 20, 100), seconds, wrk_bin, pin(1), rows)
            stop([es])
            port = free_port()
            gw = start(['--serve-gateway', str(port), up], f'http://127.0.0.1:{port}/health', prefix=pin(0))
            measure('gateway', f'http://127.0.0.1:{port}/v1/chat/completions', gw.pid, [WHOLE, STREAM], (1, 20, 100), seconds, wrk_bin, pin(1), rows)
            stop([gw])
        # workers: nothing pinned, so a second worker has a core to use; the bare proxy at the same sizes, uvicorn's
        # workers too, shows what the machine leaves for a second worker once the upstream and wrk have theirs
        upid = procs[0].pid
        for n in (1, 2) if not peers_only else ():
            port = free_port()
            sv = serve_workers(port, up, n, tempfile.mkdtemp())
            measure(SIZED['gateway'].format(n), f'http://127.0.0.1:{port}/v1/chat/completions', sv.pid, [WHOLE], (20, 100), seconds,
                    wrk_bin, [], rows, upstream=upid)
            stop([sv])
            port = free_port()
            fl = start(['--serve-proxy', str(port), up, str(n)], f'http://127.0.0.1:{port}/health')
            measure(SIZED['bare proxy'].format(n), f'http://127.0.0.1:{port}/v1/chat/completions', fl.pid, [WHOLE], (20, 100),
                    seconds, wrk_bin, [], rows, upstream=upid)
            stop([fl])
        if litellm:   # started only now, so it does not load the machine while the rows above are measured
            ll, key = start_litellm(litellm, up)
            try: measure('LiteLLM 1.110.2', f'http://127.0.0.1:{ll[1]}/v1/chat/completions', ll[0].pid, [WHOLE, STREAM], (1, 20, 100),
                         seconds, wrk_bin, pin(1), rows, {'Authorization': f'Bearer {key}'})
            finally: stop([ll[0]])
            for n in (1, 2):   # beside `serve --workers N`: unpinned, whole answers; at 100 connections most of its answers
                ll, key = start_litellm(litellm, up, n)   # take longer than wrk's 10 s timeout, so 20 only
                try: measure(SIZED['LiteLLM'].format(n), f'http://127.0.0.1:{ll[1]}/v1/chat/completions', ll[0].pid, [WHOLE], (20,),
                             seconds, wrk_bin, [], rows, {'Authorization': f'Bearer {key}'}, upstream=upid)
                finally: stop([ll[0]])
        if portkey:   # likewise only now; one Node process (no workers), on core 0 with the upstream as the gateway's rows
            pk, headers = start_portkey(portkey, up, prefix=pin(0))
            try: measure(f'Portkey {PORTKEY_VERSION}', f'http://127.0.0.1:{pk[1]}/v1/chat/completions', pk[0].pid, [WHOLE, STREAM],
                         (1, 20, 100), seconds, wrk_bin, pin(1), rows, headers)
            finally: stop([pk[0]])
    finally: stop(procs)
    direct = {(k, c): r for n, k, c, r, *_ in rows if n == 'direct'}
    print(f'{"path":22} {"answer":10} {"conns":>5} {"req/s":>7} {"p50 ms":>7} {"p99 ms":>8} {"vs direct":>9} {"CPU s/1k":>8} {"upstream":>8} {"wrk CPU":>7} {"others":>6}')
    for name, kind, conns, rps, p50, p99, own, cpu, up_cpu, others in rows:
        ratio = f'{rps / direct[(kind, conns)]:8.2f}x' if (kind, conns) in direct else ''
        f = lambda v, w=8: '' if v is None else f'{v:{w}.2f}'
        print(f'{name:22} {kind:10} {conns:5} {rps:7.0f} {p50:7.2f} {p99:8.2f} {ratio:>9} {f(cpu):>8} {f(up_cpu):>8} {own*100:6.0f}% {f(others, 6):>6}')
    print('pinned rows: the server measured and the upstream on core 0, wrk on core 1 (LiteLLM\'s own process is not pinned); '
          'workers rows: nothing pinned. CPU s/1k: CPU seconds of the server (and its workers) per 1,000 requests; upstream: the '
          'fake upstream\'s, likewise; wrk CPU: the generator\'s share of a core; others: cores the rest of the machine used meanwhile')
    against_peers(rows)
    return rows, scaling(rows)

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seconds', type=int, default=5, help='seconds of load for each measurement')
    ap.add_argument('--litellm', help='a venv with litellm 1.110.2 installed, to add its rows')
    ap.add_argument('--portkey', metavar='DIR', help=f"a folder for Portkey's gateway (npm @portkey-ai/gateway {PORTKEY_VERSION}, "
                    'installed there when missing), to add its rows')
    ap.add_argument('--peers-only', action='store_true', help='only the direct rows and the peers\' (a quick check that a peer runs)')
    a = ap.parse_args()
    main(a.seconds, a.litellm, a.portkey, a.peers_only)
