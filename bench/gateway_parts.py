"""Where the gateway's CPU goes under load, by taking its parts away: the CPU a whole answer costs the server process
(ms, from /proc) under `wrk -c20`, for three servers on uvicorn, measured in turn:

- `door only`: the gateway's app reading and checking the request as a door does (`read_json`, `check_request`) and
  answering a fixed completion: what uvicorn, Starlette's request and the door's reading cost;
- `no upstream`: the whole gateway (`make_app`, metrics, the ledger's commit) in front of a function upstream that
  answers at once: the gateway's own logic, without the upstream's HTTP;
- `gateway`: as `bench/gateway_overhead.py` serves it, in front of its fake upstream;

and then `no upstream` with its parts taken away, one at a time and all at once: `metrics` (make_app's, off), `ledger`
(rows built but neither written nor waited for), `deadlines` (the silence deadlines, `watch`, not armed), `disconnect`
(no task watching for a client that leaves). What each saves is what it costs; what is left with all four gone is
routing, the sampling ladder, the call's bookkeeping and the answer's chunks.

Run: `python bench/gateway_parts.py [ROUNDS]` (default 5 rounds of 4 s each; about four minutes). Servers on core 0, wrk
on core 1, as in gateway_throughput.py. Prints each server's median and its rounds: on a shared virtual machine the CPU
an answer moves by 20 to 30% between rounds, so only differences well beyond that say anything.
"""
import statistics, sys, tempfile
from pathlib import Path
from harness import cpu_seconds, ensure_wrk, free_port, pin, serve_gateway, start, stop, wrk

WHOLE = {'model': 'fake', 'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': 4, 'stream': False}
PARTS_TAKEN = ('metrics', 'ledger', 'deadlines', 'disconnect')   # what `without` can take away
TAKEN = {'no upstream': (), 'no upstream, no metrics': ('metrics',), 'no upstream, no ledger': ('ledger',),
         'no upstream, no deadlines': ('deadlines',), 'no upstream, no disconnect watch': ('disconnect',),
         'no upstream, none of the four': PARTS_TAKEN}   # what each server goes without
PARTS = ('door only', *TAKEN, 'gateway')

def door_only_app():
    "Reads and checks a chat request as the doors do, then answers a fixed completion."
    from starlette.requests import Request
    from starlette.responses import Response
    from ramabana.chat import check_request, json_bytes
    from ramabana.doors import read_json
    answer = json_bytes({'id': 'c1', 'object': 'chat.completion', 'created': 1, 'model': 'fake', 'choices': [
        {'index': 0, 'message': {'role': 'assistant', 'content': 't0 t1 t2 t3 '}, 'finish_reason': 'stop'}]})
    async def app(scope, receive, send):
        if scope['type'] != 'http': return
        if scope['method'] == 'POST': check_request(await read_json(Request(scope, receive, send), 1 << 20))
        await Response(answer, media_type='application/json')(scope, receive, send)
    return app

def serve(part:str, port:int, upstream:str):
    "Serve `part` on `port`."
    import uvicorn
    from ramabana.app import make_app, tune_gc
    from ramabana.chat import chunk
    from ramabana.core import ModelSpec
    from ramabana.gateway import Gateway
    from ramabana.ledger import Ledger
    from ramabana.upstream import Capabilities, FunctionUpstream, register_upstream
    kw = dict(host='127.0.0.1', port=port, log_level='warning', access_log=False)
    if part == 'door only':
        app = door_only_app()
        tune_gc()   # every server here as `ramabana serve` runs
        return uvicorn.run(app, lifespan='off', **kw)
    if part == 'gateway': return serve_gateway(port, upstream)   # as harness.py serves it
    # the fake upstream's answer, from a function: four tokens, the finish, the usage
    register_upstream('function', FunctionUpstream)
    gw = Gateway(ledger=Ledger(Path(tempfile.mkdtemp())/'ledger.sqlite'), models={'fake': ModelSpec('fake', 'function', price=dict(input=1.0, output=2.0))})
    up = gw.upstream(gw.spec('fake'))
    up.caps = Capabilities(source='props')
    up.fn = lambda body: [*(chunk({'content': f't{i} '}) for i in range(4)), chunk(finish='stop'),
                          chunk(usage={'prompt_tokens': 5, 'completion_tokens': 4, 'total_tokens': 9})]
    without(TAKEN[part])
    app = make_app(gw, metrics='metrics' not in TAKEN[part])
    tune_gc()
    uvicorn.run(app, lifespan='on', **kw)

def without(parts) -> None:
    "Take `parts` (of PARTS_TAKEN; the metrics are `make_app`'s to leave out) away from every gateway of this process."
    import ramabana.doors as doors, ramabana.gateway as gateway
    from ramabana.ledger import Ledger
    if 'ledger' in parts: Ledger.record = lambda self, row: 0   # ticket 0: `committed` is True at once
    if 'deadlines' in parts: gateway.watch = lambda agen, *a, **kw: agen   # `attempt` then arms no deadline
    if 'disconnect' in parts:
        async def unless_gone(request, aw): return True, await aw
        doors.unless_gone = unless_gone

def main(rounds:int=5, seconds:int=4):
    wrk_bin, up_port = ensure_wrk(), free_port()
    up = f'http://127.0.0.1:{up_port}'
    procs = [start(['--serve-upstream', str(up_port)], up + '/health', prefix=pin(0))]
    servers, got = {}, {p: [] for p in PARTS}
    try:
        for part in PARTS:   # the door-only app answers every path, /health too
            port = free_port()
            p = start(['--serve', part, str(port), up], f'http://127.0.0.1:{port}/health', prefix=pin(0), script=__file__)
            procs.append(p)
            url = f'http://127.0.0.1:{port}/v1/chat/completions'
            servers[part] = p, url
            wrk(url, WHOLE, 20, 1, wrk_bin, pin(1))   # warm up
        for _ in range(rounds):
            for part, (p, url) in servers.items():
                c0 = cpu_seconds(p.pid)
                rps, *_ = wrk(url, WHOLE, 20, seconds, wrk_bin, pin(1))
                got[part].append(((cpu_seconds(p.pid) - c0) / (rps * seconds) * 1e3, rps))
    finally: stop(procs)
    print('| server | CPU ms a whole answer, median | rounds | req/s, median |\n|---|---|---|---|')
    for part, v in got.items():
        print(f'| {part} | {statistics.median(c for c, _ in v):.3f} | {" / ".join(f"{c:.3f}" for c, _ in v)} | '
              f'{statistics.median(r for _, r in v):,.0f} |')

if __name__ == '__main__':
    if sys.argv[1:2] == ['--serve']: serve(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else: main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
