"""What Python's garbage collector costs the served gateway: collections of each generation per 1,000 requests and
the milliseconds a request spends in them, with Python's default settings and with `tune_gc` (what `ramabana serve`
does), for whole answers and 64-token streams under `wrk -c20`.

Run: `python bench/gc_cost.py [SECONDS]` (default 5 s of load a figure after 2 s of warm-up; about a minute). The
collector is timed from inside the gateway's process by a `gc.callbacks` hook, so the figures hold whatever else the
machine does; the fake upstream and the gateway share core 0 and wrk has core 1, as in bench/gateway_throughput.py.
"""
import gc, json, os, signal, sys, tempfile, time
from pathlib import Path
from harness import STREAM, WHOLE, body, ensure_wrk, free_port, pin, start, wrk

def serve_timed(port:int, upstream:str, tuned:bool, out:str):
    "The bench's gateway with the collector timed; SIGUSR1 appends (collections, seconds) per generation to `out`."
    import harness, ramabana.app
    count, spent, began = [0, 0, 0], [0.0, 0.0, 0.0], [0.0]
    def hook(phase, info):
        if phase == 'start': began[0] = time.perf_counter(); return
        g = info['generation']; count[g] += 1; spent[g] += time.perf_counter() - began[0]
    gc.callbacks.append(hook)
    def note(*a):
        with open(out, 'a') as f: f.write(json.dumps([count, spent]) + '\n')
    signal.signal(signal.SIGUSR1, note)
    if not tuned: ramabana.app.tune_gc = lambda: None   # Python's defaults
    harness.serve_gateway(port, upstream)

def main(seconds:int):
    wrk_bin, up_port = ensure_wrk(), free_port()
    up = f'http://127.0.0.1:{up_port}'
    procs = [start(['--serve-upstream', str(up_port)], up + '/health', prefix=pin(0))]
    print('| settings | answer | collections a 1,000 requests (gen 0 / 1 / 2) | GC ms a request |\n|---|---|---|---|')
    try:
        for tuned in (False, True):
            port, out = free_port(), str(Path(tempfile.mkdtemp())/'gc.jsonl')
            gw = start(['--serve-timed', str(port), up, str(tuned), out], f'http://127.0.0.1:{port}/health', prefix=pin(0), script=__file__)
            procs.append(gw)
            url = f'http://127.0.0.1:{port}/v1/chat/completions'
            for kind, n_tokens, stream in (WHOLE, STREAM):
                ask = body(n_tokens, stream)
                wrk(url, ask, 20, 2, wrk_bin)   # warm-up
                gw.send_signal(signal.SIGUSR1); time.sleep(0.3)
                n = wrk(url, ask, 20, seconds, wrk_bin)[0] * seconds   # requests, as wrk's rate times its seconds
                gw.send_signal(signal.SIGUSR1); time.sleep(0.3)
                (c0, s0), (c1, s1) = [json.loads(l) for l in Path(out).read_text().splitlines()[-2:]]
                per = ' / '.join(f'{(b - a) / n * 1000:.1f}' for a, b in zip(c0, c1))
                print(f'| {"tune_gc" if tuned else "defaults"} | {kind} | {per} | {(sum(s1) - sum(s0)) / n * 1000:.4f} |', flush=True)
            gw.send_signal(signal.SIGTERM); gw.wait(10); procs.remove(gw)
    finally:
        for p in procs: p.send_signal(signal.SIGTERM); p.wait(10)

if __name__ == '__main__':
    if sys.argv[1:2] == ['--serve-timed']: serve_timed(int(sys.argv[2]), sys.argv[3], sys.argv[4] == 'True', sys.argv[5])
    else: main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
