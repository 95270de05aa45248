"""What each door of the gateway adds next to chat completions: the same answers asked for in three dialects.

Run: `python bench/dialects.py` (about two minutes). The fake upstream and the gateway are the ones
`bench/gateway_overhead.py` runs; Debian's `wrk` sends one request at a time (one connection, so p50 is latency, not
queueing) on core 1 while the servers share core 0, five runs of `--seconds` each. For each door and answer kind
(whole, or streamed with 64 tokens) the table shows p50 and the gateway's CPU per request (from /proc), and then what
each door adds to chat completions in the same run, as the median over the runs. On one connection the added CPU is
the added latency. On a shared machine both move by tenths of a millisecond between runs, so the script ends with the
steady part of what a door adds to a stream: writing its events, timed in this process. Goal: each door within 0.2 ms
of chat completions.
"""
import argparse, statistics, sys
from pathlib import Path
from harness import cpu_seconds, ensure_wrk, free_port, pin, start, stop, wrk

def bodies(n:int, stream:bool) -> dict:
    "The same question in each dialect: path and body."
    msg = [{'role': 'user', 'content': 'hello'}]
    return {'chat': ('/v1/chat/completions', {'model': 'fake', 'messages': msg, 'max_tokens': n, 'stream': stream}),
            'messages': ('/v1/messages', {'model': 'fake', 'messages': msg, 'max_tokens': n, 'stream': stream}),
            'responses': ('/v1/responses', {'model': 'fake', 'input': 'hello', 'max_output_tokens': n, 'stream': stream})}

def main(seconds:int=3, runs:int=5):
    w = wrk_bin = ensure_wrk()
    up_port, gw_port = free_port(), free_port()
    up = f'http://127.0.0.1:{up_port}'
    procs = [start(['--serve-upstream', str(up_port)], up + '/health', prefix=pin(0))]
    rows = []
    try:
        gw = start(['--serve-gateway', str(gw_port), up], f'http://127.0.0.1:{gw_port}/health', prefix=pin(0))
        procs.append(gw)
        for kind, n, stream in (('whole', 4, False), ('stream 64', 64, True)):
            for run in range(1, runs + 1):
                p50 = {}
                for door, (path, body) in bodies(n, stream).items():
                    url = f'http://127.0.0.1:{gw_port}{path}'
                    wrk(url, body, 1, 1, w)   # warm up
                    c0 = cpu_seconds(gw.pid)
                    rps, p50_, *_ = wrk(url, body, 1, seconds, w)
                    p50[door] = (p50_, (cpu_seconds(gw.pid) - c0) / (rps * seconds) * 1000)   # ms of gateway CPU a request
                rows.append((kind, run, p50))
    finally: stop(procs)
    print(f'{"answer":10} {"run":>3} | {"p50 ms: chat":>12} {"messages":>9} {"responses":>9} | {"CPU ms/req: chat":>16} {"messages":>9} {"responses":>9}')
    added = {}
    for kind, run, p in rows:
        print(f'{kind:10} {run:3} | {p["chat"][0]:12.3f} {p["messages"][0]:9.3f} {p["responses"][0]:9.3f} | '
              f'{p["chat"][1]:16.3f} {p["messages"][1]:9.3f} {p["responses"][1]:9.3f}')
        for d in ('messages', 'responses'):
            added.setdefault((kind, d), []).append((p[d][0] - p['chat'][0], p[d][1] - p['chat'][1]))
    print('added to chat completions in the same run, median of the runs (p50 moves by tenths of a millisecond between runs '
          'here; the gateway\'s CPU per request, from /proc, is the steadier measure of what a door costs):')
    ok = True
    for (kind, d), v in sorted(added.items()):
        lat, cpu = statistics.median(a for a, _ in v), statistics.median(c for _, c in v)
        if kind == 'whole':
            print(f'  {d:9} {kind:10} p50 {lat:+.3f} ms  CPU {cpu:+.3f} ms  {"PASS" if cpu <= 0.2 else "FAIL"} (goal <= 0.2 ms)')
            ok &= cpu <= 0.2
        else:   # a stream's figures swing by more than the goal between runs here: its verdict is the timing below
            print(f'  {d:9} {kind:10} p50 {lat:+.3f} ms  CPU {cpu:+.3f} ms  (see below)')
    return ok

def event_cost(n:int=64) -> dict:
    "Microseconds to write the events of an n-token streamed answer, per door, in this process (the best of 9 timings)."
    import timeit
    from ramabana.dialects import MessageEvents, ResponseEvents
    from ramabana.doors import ChatEvents
    from ramabana.chat import parse_chunk
    tok = parse_chunk(b'{"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{"content":"t17 "},"finish_reason":null}]}')
    fin = parse_chunk(b'{"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}')
    chunks = [tok] * n + [fin]
    relay = type('Exchange', (), {'usage': False})   # chat completions pass each chunk's own bytes on
    write = lambda ev: ev.start() + b''.join(map(ev.chunk, chunks)) + ev.end()
    doors = {'chat': lambda: ChatEvents(relay).burst(chunks), 'messages': lambda: write(MessageEvents('m', 'msg_1')),
             'responses': lambda: write(ResponseEvents('m', 'resp_1'))}
    return {d: min(timeit.timeit(f, number=500) / 500 * 1e6 for _ in range(9)) for d, f in doors.items()}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seconds', type=int, default=3, help='seconds of load for each figure')
    ap.add_argument('--runs', type=int, default=5, help='runs (the median added figure counts)')
    a = ap.parse_args()
    ok = main(a.seconds, a.runs)
    cost = event_cost()
    print('\nwriting the events of a 64-token stream, in this process (the steady part of what a door adds to a stream):')
    for d, us in cost.items():
        added = us - cost['chat']
        print(f'  {d:9} {us:6.0f} us' + ('' if d == 'chat' else f'   added {added:+5.0f} us  {"PASS" if added <= 200 else "FAIL"} (goal <= 0.2 ms)'))
        ok &= d == 'chat' or added <= 200
    raise SystemExit(0 if ok else 1)
