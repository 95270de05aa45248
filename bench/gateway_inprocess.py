"""The gateway in-process, for a profiler: `GatewayApp` called over raw ASGI, one request after another, in front of
harness.py's fake upstream (started here on loopback, in a process of its own).

Run: `python bench/gateway_inprocess.py whole|stream|whole20 [N] [APP]`, or under py-spy:
`py-spy record -r 500 --format raw -o prof.txt -- python bench/gateway_inprocess.py stream 3000`.
`whole` asks for a 4-token whole answer, `stream` for a 64-token stream, `whole20` for whole answers 20 at a time (as
20 connections would: what requests in flight together share, such as a commit, shows here). Prints the wall time a
request, which on a shared machine is only good for comparing runs made one after the other. APP is `gateway` (the
default) or one of harness.py's two floors, `essentials` and `proxy` (the bare proxy), called the same way:
bench/floor_instructions.py counts the three.
"""
import asyncio, json, sys, tempfile, time
from pathlib import Path
import uvloop
from harness import essentials_app, free_port, proxy_app, start
from ramabana.core import ModelSpec
from ramabana.gateway import Gateway
from ramabana.app import make_app, tune_gc
from ramabana.ledger import Ledger

AT_ONCE = {'whole': 1, 'stream': 1, 'whole20': 20}   # requests in flight together, per mode

def request(mode:str) -> bytes:
    return json.dumps({'model': 'fake', 'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': 64 if mode == 'stream' else 4,
                       'stream': mode == 'stream'}).encode()

async def one(app, raw:bytes) -> list:
    "One request through `app`: what it sent back (the status, then the body's pieces)."
    sent, done, first = [], asyncio.Event(), [True]
    async def receive():
        if first[0]: first[0] = False; return {'type': 'http.request', 'body': raw, 'more_body': False}
        await done.wait(); return {'type': 'http.disconnect'}   # as a server says once the response has ended
    async def send(m):
        if m['type'] == 'http.response.start': sent.append(m['status'])
        elif m['type'] == 'http.response.body':
            sent.append(m['body'])
            if not m.get('more_body'): done.set()
    scope = {'type': 'http', 'method': 'POST', 'path': '/v1/chat/completions', 'query_string': b'', 'root_path': '',
             'headers': [(b'content-type', b'application/json'), (b'content-length', str(len(raw)).encode())],
             'client': ('127.0.0.1', 1), 'server': ('127.0.0.1', 2), 'scheme': 'http', 'http_version': '1.1'}
    await app(scope, receive, send)
    assert sent[0] == 200, sent[:2]
    return sent

APPS = ('gateway', 'essentials', 'proxy')

async def run(mode:str, n:int, url:str, which:str='gateway'):
    db, gw = Path(tempfile.mkdtemp())/'ledger.sqlite', None
    if which == 'gateway':
        gw = Gateway(ledger=Ledger(db), models={'fake': ModelSpec('fake', 'llamacpp', base_url=url)})
        app = make_app(gw)
    else: app = essentials_app(url, db) if which == 'essentials' else proxy_app(url)
    raw = request(mode)
    for _ in range(30): out = await one(app, raw)   # warm-up: connections, capabilities, caches
    tune_gc()   # as `ramabana serve` does once it is ready to serve
    if mode == 'stream' and which != 'essentials':   # the essentials answer whole
        assert b''.join(out[1:]).count(b'data: ') == 64 + 2, out[-1][-200:]   # 64 tokens, the finish, [DONE]
    async def some(k):
        for _ in range(k): await one(app, raw)
    t, at_once = time.perf_counter(), AT_ONCE[mode]
    await asyncio.gather(*(some(n // at_once + (i < n % at_once)) for i in range(at_once)))
    print(f'{which}, {mode}: {(time.perf_counter() - t) / n * 1e6:.0f} µs a request ({n} requests)')
    if gw is not None: gw.ledger.close()

def main(mode:str, n:int, which:str='gateway'):
    port = free_port()
    up = start(['--serve-upstream', str(port)], f'http://127.0.0.1:{port}/health')
    try: uvloop.run(run(mode, n, f'http://127.0.0.1:{port}', which))
    finally: up.terminate(); up.wait(10)

if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in AT_ONCE or (len(sys.argv) > 3 and sys.argv[3] not in APPS): raise SystemExit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000, sys.argv[3] if len(sys.argv) > 3 else 'gateway')
