"""What the gateway adds on top of calling an upstream directly: per-request latency, per-chunk relay cost, throughput.

Run: `python bench/gateway_overhead.py` (about five minutes; six with `--litellm`). Optionally `--litellm VENV` adds
rows for a LiteLLM proxy installed in that throwaway venv (see ../shared/FINDINGS.md), at 1 and 2 workers in the
throughput table beside `serve --workers`. Three processes: a fast fake upstream (raw ASGI on
uvicorn), the gateway (the same code `ramabana serve` runs, ledger in a temporary dir), and this client. Each row
compares going through the gateway with going straight to the same upstream.

`--metrics` measures instead what the gateway's metrics cost (about a minute): what counting one row takes, in one
process and with the files of several workers, then the added p50 with metrics on and off, in alternating runs, and
the gateway's own time as `x-ramabana-overhead-ms` reports it.

`--limits` measures what a named token's limits cost (about a minute): three gateways with one token each, without
limits, with rates (`rpm`, `tpm`, `max_parallel`, never reached) and with a budget too (a hold in the ledger's store
before each call, settled after it), their added p50 in alternating runs.

Goals (issue 28): <= 0.8 ms p50 added per request (the median of `--runs` runs of `paired_added`: each run sends its
requests in pairs, one straight and one through the gateway, and takes the median difference; the two p50s of
separate runs, printed too, moved by over a millisecond on this shared machine) and <= 5 us per streamed chunk (best of `--runs`); whole answers at 20
connections >= 0.5x the bare proxy's req/s, at <= 2x its CPU an answer; 2 workers carrying >= 1.6x what 1 carries (the
table says how much 2 cores allow at most); gateway RSS <= 80 MiB idle. The throughput table (bench/gateway_throughput.py, wrk) follows, with two
floor rows: the bare proxy, the least any Python proxy on uvicorn does, which bounds what the gateway can carry next to
direct; and the essentials (`essentials_app`), the bare proxy plus the work no gateway that reads answers and keeps a
durable record can skip, which says how much of the gap to the bare proxy that work explains. The gateway and both
floors tune their garbage collector as `ramabana serve` does (`tune_gc`).
"""
import argparse, asyncio, json, os, secrets, signal, socket, statistics, subprocess, sys, tempfile, time
from pathlib import Path
import httpx

# --- the fake upstream: as little work per request as possible, chunks that vary (LiteLLM stops on 100 identical) ---

async def read_body(receive) -> bytes:
    "An ASGI request's whole body."
    body = b''
    while True:
        m = await receive()
        body += m.get('body', b'')
        if not m.get('more_body'): return body

def upstream_app():
    "A raw ASGI llama-server stand-in: streams `n` chunks (`max_tokens`, default 4) and a usage chunk."
    async def app(scope, receive, send):
        if scope['type'] != 'http': return
        body = await read_body(receive)
        path = scope['path']
        if path.endswith('/props') or path.endswith('/health') or path.endswith('/models'):
            doc = {'object': 'list', 'data': [{'id': 'fake', 'object': 'model'}]} if path.endswith('/models') else \
                  {'chat_template': '', 'chat_template_caps': {'supports_tools': True}} if path.endswith('/props') else {'status': 'ok'}
            await send({'type': 'http.response.start', 'status': 200, 'headers': [(b'content-type', b'application/json')]})
            return await send({'type': 'http.response.body', 'body': json.dumps(doc).encode()})
        req = json.loads(body)
        n = int(req.get('max_tokens') or 4)
        head = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{"content":"'
        if not req.get('stream'):
            msg = {'id': 'c1', 'object': 'chat.completion', 'created': 1, 'model': 'fake',
                   'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': ''.join(f't{i} ' for i in range(n))}, 'finish_reason': 'stop'}],
                   'usage': {'prompt_tokens': 5, 'completion_tokens': n, 'total_tokens': 5 + n}}
            await send({'type': 'http.response.start', 'status': 200, 'headers': [(b'content-type', b'application/json')]})
            return await send({'type': 'http.response.body', 'body': json.dumps(msg).encode()})
        await send({'type': 'http.response.start', 'status': 200, 'headers': [(b'content-type', b'text/event-stream')]})
        batch, per_write = [], 1 if req.get('x_one_event_per_write') else 64   # llama-server writes one event per token
        for i in range(n):
            batch.append(f'data: {head}t{i} "}},"finish_reason":null}}]}}\n\n')
            if len(batch) == per_write:
                await send({'type': 'http.response.body', 'body': ''.join(batch).encode(), 'more_body': True}); batch = []
        batch.append('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
        batch.append('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}\n\ndata: [DONE]\n\n' % (n, n + 5))
        await send({'type': 'http.response.body', 'body': ''.join(batch).encode()})
    return app

def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def serve_upstream(port):
    import uvicorn
    uvicorn.run(upstream_app(), host='127.0.0.1', port=port, log_level='warning', access_log=False, lifespan='off')

class Pool:
    "Kept-alive HTTP/1.1 connections to one upstream, with the least a proxy needs to reuse them (the gateway's LocalHTTP keeps them too)."
    def __init__(self, url):
        from urllib.parse import urlsplit
        u = urlsplit(url)
        self.addr, self.idle = (u.hostname, u.port), []

    async def post(self, path:bytes, body:bytes) -> tuple[int, bytes]:
        "(status, body) of POST `body` to `path`, a chunked body joined; pooled connections found closed are passed over."
        while True:
            reused = bool(self.idle)
            r, w = self.idle.pop() if reused else await asyncio.open_connection(*self.addr)
            w.write(b'POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n' % (path, len(body)) + body)
            try: head = await r.readuntil(b'\r\n\r\n')
            except (asyncio.IncompleteReadError, ConnectionError):   # closed while idle (a keep-alive timeout)
                w.close()
                if reused: continue   # the next idle one, then a new connection
                raise
            low = head.lower()
            if b'transfer-encoding: chunked' in low:
                parts = []
                while (n := int((await r.readuntil(b'\r\n'))[:-2].split(b';')[0], 16)): parts.append((await r.readexactly(n + 2))[:-2])
                await r.readuntil(b'\r\n')
                data = b''.join(parts)
            else: data = await r.readexactly(int(low.split(b'content-length:')[1].split(b'\r\n')[0]))
            if b'connection: close' in low: w.close()
            else: self.idle.append((r, w))
            return int(head.split(b' ', 2)[1]), data

def proxy_app(upstream):
    "The floor: the least a Python proxy on uvicorn does per request (no parsing, a kept-alive upstream connection, bytes relayed)."
    pool = Pool(upstream)
    async def app(scope, receive, send):
        if scope['type'] != 'http': return
        status, data = await pool.post(scope['path'].encode(), await read_body(receive))
        await send({'type': 'http.response.start', 'status': status, 'headers': [(b'content-type', b'application/json')]})
        await send({'type': 'http.response.body', 'body': data})
    return app

def essentials_app(upstream, db):
    """The floor of a gateway that keeps a record: the bare proxy plus what any gateway doing this job does for an answer,
    each the cheapest way, with nothing checked or counted: parse the request, ask for a stream, parse every event and
    join the text, write the whole answer, commit one row of the ledger's table (WAL, synchronous=NORMAL, as the ledger)
    before answering; the answers that end in the same turn of the event loop share one commit, as the ledger's do."""
    import msgspec, sqlite3, uuid
    from ramabana.ledger import Ledger
    Ledger(db).close()   # the ledger's own table and indexes, made by the ledger
    con = sqlite3.connect(db, check_same_thread=False)
    con.execute('PRAGMA synchronous=NORMAL')
    insert = ('INSERT INTO model_calls (id, time, model, upstream, status, stream, finish_reason, prompt_tokens, '
              'completion_tokens, total_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
    dec, enc, pool = msgspec.json.Decoder(), msgspec.json.Encoder(), Pool(upstream)
    rows, waiting = [], []   # this turn's rows and the answers waiting for their commit
    def commit_turn():
        done, batch = list(waiting), list(rows)
        waiting.clear(); rows.clear()
        try:
            with con: con.executemany(insert, batch)
            failed = None
        except sqlite3.Error as e: failed = e   # no writer thread to hand it to, as the ledger has: its answers fail
        for fut in done:
            if fut.done(): continue
            if failed: fut.set_exception(failed)
            else: fut.set_result(None)
    async def committed(row):
        if not rows: asyncio.get_running_loop().call_soon(commit_turn)
        rows.append(row)
        waiting.append(fut := asyncio.get_running_loop().create_future())
        await fut
    async def app(scope, receive, send):
        if scope['type'] != 'http': return
        t0 = time.perf_counter()
        if scope['path'] == '/health':
            await send({'type': 'http.response.start', 'status': 200, 'headers': []})
            return await send({'type': 'http.response.body', 'body': b'ok'})
        req = dec.decode(await read_body(receive))
        if not (isinstance(req.get('model'), str) and isinstance(req.get('messages'), list)): raise ValueError('not a chat request')
        out = enc.encode({**req, 'stream': True, 'stream_options': {'include_usage': True}})
        _, data = await pool.post(b'/v1/chat/completions', out)   # a kept-alive connection, as the bare proxy
        text, finish, usage = [], None, {}
        for line in data.split(b'\n'):
            if not line.startswith(b'data: ') or line == b'data: [DONE]': continue
            ch = dec.decode(line[6:])
            for c in ch.get('choices') or ():
                text.append(c.get('delta', {}).get('content') or '')
                finish = c.get('finish_reason') or finish
            usage = ch.get('usage') or usage
        answer = enc.encode({'id': 'c1', 'object': 'chat.completion', 'created': 1, 'model': req['model'], 'usage': usage,
                             'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': ''.join(text)}, 'finish_reason': finish}]})
        await committed((uuid.uuid4().hex, time.strftime('%Y-%m-%dT%H:%M:%S'), req['model'], 'llamacpp', 200, 0,
                         finish, usage.get('prompt_tokens'), usage.get('completion_tokens'), (time.perf_counter() - t0) * 1e3))
        await send({'type': 'http.response.start', 'status': 200, 'headers': [(b'content-type', b'application/json')]})
        await send({'type': 'http.response.body', 'body': answer})
    return app

def serve_essentials(port, upstream):
    "The essentials floor on `port`, its table in a temporary dir."
    import uvicorn
    from ramabana.app import tune_gc
    app = essentials_app(upstream, Path(tempfile.mkdtemp())/'ledger.sqlite')
    tune_gc()   # as `ramabana serve` does: a floor takes every saving the gateway takes
    uvicorn.run(app, host='127.0.0.1', port=port, log_level='warning', access_log=False, lifespan='off')

def proxy_from_env():
    "The floor proxy in front of $BENCH_UPSTREAM: what each worker of `serve_proxy(workers=N)` runs."
    from ramabana.app import tune_gc
    app = proxy_app(os.environ['BENCH_UPSTREAM'])
    tune_gc()
    return app

def serve_proxy(port, upstream, workers=1):
    "The floor proxy on `port`; several `workers` share it as `ramabana serve --workers` does (uvicorn's own workers)."
    import uvicorn
    kw = dict(host='127.0.0.1', port=port, log_level='warning', access_log=False, lifespan='off')
    if workers == 1:
        from ramabana.app import tune_gc
        app = proxy_app(upstream)
        tune_gc()
        return uvicorn.run(app, **kw)
    os.environ['BENCH_UPSTREAM'] = upstream
    uvicorn.run('gateway_overhead:proxy_from_env', factory=True, workers=workers, **kw)

LIMITS = {'none': {}, 'rates': dict(rpm=10**6, tpm=10**9, max_parallel=1000),   # never reached: only their cost counts
          'budget': dict(rpm=10**6, tpm=10**9, max_parallel=1000, budget_usd=10**6, budget_period='month')}
BENCH_TOKEN = 'bench-secret-token'

def serve_gateway(port, upstream, metrics=True, limits=None):
    "The gateway on `port`; with `limits` (a key of LIMITS), every request must carry BENCH_TOKEN, whose limits those are."
    import uvicorn
    from ramabana.core import ModelSpec, NamedToken
    from ramabana.gateway import Gateway
    from ramabana.app import make_app, tune_gc
    from ramabana.ledger import Ledger
    d = Path(tempfile.mkdtemp())
    fake = ModelSpec('fake', 'llamacpp', base_url=upstream, price=dict(input=1.0, output=2.0))   # a budget needs a price
    kw = {} if limits is None else dict(tokens={'bench': (BENCH_TOKEN, None)},
                                        limits={'bench': NamedToken('bench', 'BENCH_TOKEN', **LIMITS[limits])})
    gw = Gateway(ledger=Ledger(d/'ledger.sqlite'), models={'fake': fake}, **kw)
    app = make_app(gw, metrics=metrics)
    tune_gc()   # as `ramabana serve` does
    uvicorn.run(app, host='127.0.0.1', port=port, log_level='warning', access_log=False, lifespan='on')

def start(args, url, env=None, prefix=(), script=__file__):
    "`script` (this one by default) with `args` in a process of its own (behind `prefix`, e.g. taskset), once `url` answers."
    p = subprocess.Popen([*prefix, sys.executable, script, *args], env={**os.environ, **(env or {})})
    for _ in range(600):
        try:
            if httpx.get(url, timeout=1).status_code < 500: return p
        except httpx.HTTPError: pass
        time.sleep(0.05)
    p.kill(); raise SystemExit(f'{args} did not start')

def start_litellm(venv, upstream, workers=1):
    "((process, port), master key) of a LiteLLM proxy from `venv` in front of `upstream` (with `workers` uvicorn workers), once it is live."
    ll_port, key = free_port(), 'sk-' + secrets.token_hex(8)
    cfg = Path(tempfile.mkdtemp())/'litellm.yaml'
    cfg.write_text((Path(__file__).parent.parent.parent/'shared/bench/litellm-config.yaml').read_text()
                   .replace('http://127.0.0.1:18201/v1', upstream + '/v1'))
    env = dict(LITELLM_MASTER_KEY=key, LITELLM_LOCAL_MODEL_COST_MAP='True', LITELLM_LOG='ERROR')
    ll = subprocess.Popen([f'{venv}/bin/litellm', '--config', str(cfg), '--host', '127.0.0.1', '--port', str(ll_port),
                           '--num_workers', str(workers)], env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1200):
        try:
            if httpx.get(f'http://127.0.0.1:{ll_port}/health/liveliness', timeout=1).status_code == 200: break
        except httpx.HTTPError: pass
        time.sleep(0.1)
    time.sleep(1)
    return (ll, ll_port), key

def rss_mib(pid):
    for line in open(f'/proc/{pid}/status'):
        if line.startswith('VmRSS:'): return int(line.split()[1]) / 1024

# --- measurements ---

def body(n, stream=True, **kw):
    return {'model': 'fake', 'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': n, 'stream': stream, **kw}

def one(c, url, n, stream=True, **kw):
    "Time one request, reading the whole answer."
    t = time.perf_counter()
    with c.stream('POST', url, json=body(n, stream, **kw)) as r:
        assert r.status_code == 200, (r.status_code, r.read())
        for _ in r.iter_bytes(): pass
    return time.perf_counter() - t

def latency(url, headers, n_req):
    with httpx.Client(headers=headers, timeout=60) as c:
        for _ in range(20): one(c, url, 4)  # warm up connections and caches
        ts = sorted(one(c, url, 4) for _ in range(n_req))
    return ts[len(ts)//2], ts[int(len(ts)*0.99) - 1]

def paired_added(direct, url, headers, n_req):
    """The median of (through `url`) - (straight to `direct`) over `n_req` pairs of requests sent one after the other, in
    alternating order: a slow moment of a shared machine falls on both of a pair, where two p50s of two runs taken
    seconds apart each get their own moments."""
    with httpx.Client(timeout=60) as cd, httpx.Client(headers=headers, timeout=60) as cg:
        for _ in range(20): one(cd, direct, 4); one(cg, url, 4)
        diffs = []
        for i in range(n_req):
            if i % 2: g = one(cg, url, 4); d = one(cd, direct, 4)
            else: d = one(cd, direct, 4); g = one(cg, url, 4)
            diffs.append(g - d)
    return statistics.median(diffs)

def relay(url, headers, n_chunks=4000, reps=7, **kw):
    with httpx.Client(headers=headers, timeout=120) as c:
        one(c, url, n_chunks, **kw)
        return statistics.median(one(c, url, n_chunks, **kw) for _ in range(reps))

async def _throughput(url, headers, clients, seconds):
    done, stop = 0, time.perf_counter() + seconds
    async with httpx.AsyncClient(headers=headers, timeout=60, limits=httpx.Limits(max_connections=clients)) as c:
        async def worker():
            nonlocal done
            while time.perf_counter() < stop:
                async with c.stream('POST', url, json=body(4)) as r:
                    async for _ in r.aiter_bytes(): pass
                    if r.status_code == 200: done += 1
        t = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return done / (time.perf_counter() - t)

def throughput(url, headers, clients=20, seconds=5.0): return asyncio.run(_throughput(url, headers, clients, seconds))

def measure(name, url, headers, n_req):
    p50, p99 = latency(url, headers, n_req)
    return dict(name=name, p50=p50, p99=p99, chunks=relay(url, headers), chunks1=relay(url, headers, x_one_event_per_write=True),
                rps=throughput(url, headers))

def main(n_req=500, litellm=None, runs=3, seconds=5):
    "Latency and relay rows (each of `runs` runs, then the best), then the throughput table of gateway_throughput.py."
    up_port, gw_port = free_port(), free_port()
    up_url = f'http://127.0.0.1:{up_port}'
    procs = [start(['--serve-upstream', str(up_port)], up_url + '/health')]
    rows, rss = [], {}
    try:
        gw = start(['--serve-gateway', str(gw_port), up_url], f'http://127.0.0.1:{gw_port}/health')
        procs.append(gw)
        time.sleep(0.5)
        rss['ramabana gateway'] = idle = rss_mib(gw.pid)
        paired = []
        for run in range(1, runs + 1):
            rows += [dict(measure('direct (baseline)', up_url + '/v1/chat/completions', {}, n_req), run=run),
                     dict(measure('ramabana gateway', f'http://127.0.0.1:{gw_port}/v1/chat/completions', {}, n_req), run=run)]
            paired.append(paired_added(up_url + '/v1/chat/completions', f'http://127.0.0.1:{gw_port}/v1/chat/completions', {}, n_req) * 1e3)
        if litellm:   # started only now: it does not load the machine while the rows above are measured
            (ll, ll_port), key = start_litellm(litellm, up_url)
            procs.append(ll)
            rss['LiteLLM 1.110.2 proxy'] = rss_mib(ll.pid)
            rows.append(dict(measure('LiteLLM 1.110.2 proxy', f'http://127.0.0.1:{ll_port}/v1/chat/completions',
                                     {'Authorization': f'Bearer {key}'}, n_req), run=1))
    finally:
        for p in procs: p.send_signal(signal.SIGINT)
        for p in procs:
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
    print(f'{"path":24} {"run":>3} {"p50 ms":>7} {"p99 ms":>7} {"+p50 ms":>8} {"4000 chunks":>12} {"+us/chunk":>10} '
          f'{"(1/write)":>10} {"+us/chunk":>10} {"req/s x20":>10} {"vs direct":>10} {"idle RSS":>9}')
    direct = {r['run']: r for r in rows if r['name'].startswith('direct')}
    added = []
    for r in rows:
        d = direct[r['run']]
        add, per, per1 = (r['p50'] - d['p50']) * 1e3, (r['chunks'] - d['chunks']) / 4000 * 1e6, (r['chunks1'] - d['chunks1']) / 4000 * 1e6
        if r['name'] == 'ramabana gateway': added.append((add, per))
        mem = f'{rss[r["name"]]:.0f} MiB' if r['name'] in rss and r['run'] == 1 else ''
        print(f'{r["name"]:24} {r["run"]:3} {r["p50"]*1e3:7.2f} {r["p99"]*1e3:7.2f} {add:8.2f} {r["chunks"]*1e3:9.1f} ms {per:10.1f} '
              f'{r["chunks1"]*1e3:7.1f} ms {per1:10.1f} {r["rps"]:10.0f} {r["rps"]/d["rps"]:9.2f}x {mem:>9}')
    print('4000 chunks: the upstream writes 64 events at a time; (1/write): one event per write, as llama-server does; '
          'req/s x20: a Python client, which is the limit (see the table below for a real load generator)')
    best_add, best_per = min(a for a, _ in added), min(p for _, p in added)
    print(f'\nbest of {runs}: +{best_add:.2f} ms p50, +{best_per:.1f} us per chunk; idle RSS {idle:.0f} MiB')
    paired_p50 = statistics.median(paired)
    print(f'added p50 in pairs (a request straight, one through the gateway, {n_req} pairs a run): '
          f'{" / ".join(f"{p:.2f}" for p in paired)} ms; median of the runs {paired_p50:.2f} ms\n')
    from gateway_throughput import main as throughput
    rows, workers = throughput(seconds, litellm)
    at = {(r[0], r[1], r[2]): r for r in rows}
    gw, fl, es = at[('gateway', 'whole', 20)], at[('floor: bare proxy', 'whole', 20)], at[('floor: the essentials', 'whole', 20)]
    two, ceiling, left = workers[('gateway', 20)]
    print(f'\nwhole answers at 20 connections: {gw[3]:.0f} req/s, {gw[3] / fl[3]:.2f}x the floor; server CPU {gw[7]:.2f} ms '
          f'an answer, {gw[7] / fl[7]:.1f}x the floor\'s {fl[7]:.2f}; the essentials: {es[3]:.0f} req/s, {es[7]:.2f} ms an '
          f'answer (the gateway {gw[3] / es[3]:.2f}x its req/s at {gw[7] / es[7]:.1f}x its CPU)')
    checks = [('p50 added <= 0.8 ms (paired, median of the runs)', paired_p50 <= 0.8), ('per chunk <= 5 us', best_per <= 5),
              ('whole answers x20 >= 0.5x the floor', gw[3] >= 0.5 * fl[3]), ('CPU an answer <= 2x the floor', gw[7] <= 2 * fl[7]),
              (f'2 workers >= 1.6x 1 worker (2 cores allow {ceiling:.2f}x, the cores left {left:.2f}x)', two >= 1.6), ('idle RSS <= 80 MiB', idle <= 80)]
    print('\n' + '  '.join(f'{n}: {"PASS" if ok else "FAIL"}' for n, ok in checks))
    return all(ok for _, ok in checks)

# --- what the metrics cost (--metrics) ---

def observe_cost(n=20_000):
    "Microseconds `GatewayMetrics.observe` takes for one row of a llama.cpp call (every metric counts something)."
    from ramabana.core import ModelSpec
    from ramabana.gateway import Gateway
    from ramabana.ledger import Ledger
    from ramabana.telemetry import metrics_for
    gw = Gateway(ledger=Ledger(Path(tempfile.mkdtemp())/'ledger.sqlite'), models={'fake': ModelSpec('fake', 'llamacpp')})
    gw.breaker('fake')
    m = metrics_for(gw)
    row = dict(id='call-1', model='fake', upstream='llamacpp', status=200, dialect='chat', token='alice', prompt_tokens=50,
               cached_tokens=20, completion_tokens=30, total_ms=120.0, upstream_ms=119.0, ttft_ms=40.0, prefill_ms=30.0,
               decode_ms=80.0, retries=[], answered_by='fake')
    m.observe(row)   # the children exist from here on, as in a gateway that has served a while
    t = time.perf_counter()
    for _ in range(n): m.observe(row)
    return (time.perf_counter() - t) / n * 1e6

def interleaved(urls, n_req, stream=True):
    "p50 seconds of each of `urls` (a dict name -> URL), their requests interleaved (rotating order) so the machine's load falls on all alike."
    names, ts = list(urls), {k: [] for k in urls}
    own = []   # x-ramabana-overhead-ms of the answers that carry it
    with httpx.Client(timeout=60, headers={'Authorization': f'Bearer {BENCH_TOKEN}'}) as c:
        for i in range(20 + n_req):
            for k in names[i % len(names):] + names[:i % len(names)]:
                t = time.perf_counter()
                with c.stream('POST', urls[k], json=body(4, stream)) as r:
                    assert r.status_code == 200, (r.status_code, r.read())
                    for _ in r.iter_bytes(): pass
                if i < 20: continue   # warming up connections and caches
                ts[k].append(time.perf_counter() - t)
                if 'x-ramabana-overhead-ms' in r.headers: own.append(float(r.headers['x-ramabana-overhead-ms']))
    return {k: statistics.median(v) for k, v in ts.items()}, (statistics.median(own) if own else None)

def metrics_cost(n_req=500, runs=5):
    "What counting a row costs, and the added p50 with the metrics on and off (alternating runs, one gateway each)."
    here = [observe_cost() for _ in range(3)]
    shared_env = {**os.environ, 'PROMETHEUS_MULTIPROC_DIR': tempfile.mkdtemp()}
    shared = [float(subprocess.run([sys.executable, __file__, '--observe-cost'], env=shared_env, capture_output=True,
                                   text=True, check=True).stdout) for _ in range(3)]
    print(f'GatewayMetrics.observe, one row: {min(here):.1f} us in one process, {min(shared):.1f} us with the files of '
          f'several workers (best of 3; runs {", ".join(f"{x:.1f}" for x in here)} / {", ".join(f"{x:.1f}" for x in shared)})\n')
    up_port, on_port, off_port = free_port(), free_port(), free_port()
    up_url = f'http://127.0.0.1:{up_port}'
    procs = [start(['--serve-upstream', str(up_port)], up_url + '/health')]
    rows = []
    try:
        procs.append(start(['--serve-gateway', str(on_port), up_url], f'http://127.0.0.1:{on_port}/health'))
        procs.append(start(['--serve-gateway', str(off_port), up_url, 'off'], f'http://127.0.0.1:{off_port}/health'))
        urls = {name: url + '/v1/chat/completions' for name, url in
                (('direct', up_url), ('metrics on', f'http://127.0.0.1:{on_port}'), ('metrics off', f'http://127.0.0.1:{off_port}'))}
        for run in range(runs):
            got = interleaved(urls, n_req)[0]
            rows.append(got)
            print(f'run {run + 1}: direct {got["direct"]*1e3:.2f} ms p50; added: metrics on {(got["metrics on"] - got["direct"])*1e3:.3f} ms, '
                  f'off {(got["metrics off"] - got["direct"])*1e3:.3f} ms', flush=True)
        whole, own = interleaved({k: urls[k] for k in ('direct', 'metrics on')}, n_req, stream=False)
    finally:
        for p in procs: p.send_signal(signal.SIGINT)
        for p in procs:
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
    added = {k: statistics.median((r[k] - r['direct']) * 1e3 for r in rows) for k in ('metrics on', 'metrics off')}
    print(f'\nmedian of {runs} runs, added p50 (streamed answers of 4 chunks): metrics on {added["metrics on"]:.3f} ms, '
          f'off {added["metrics off"]:.3f} ms, difference {added["metrics on"] - added["metrics off"]:+.3f} ms')
    print(f'whole answers, metrics on: client p50 {whole["metrics on"]*1e3:.2f} ms, {(whole["metrics on"] - whole["direct"])*1e3:.2f} ms over '
          f'direct; x-ramabana-overhead-ms median {own:.3f} ms (the gateway\'s own time; the rest is the second HTTP hop and uvicorn)')

# --- what a limited token costs (--limits) ---

def limits_cost(n_req=500, runs=5):
    "The added p50 of a token without limits, with rates (rpm, tpm, max_parallel) and with a budget too (alternating runs)."
    up_port = free_port()
    up_url = f'http://127.0.0.1:{up_port}'
    procs, rows = [start(['--serve-upstream', str(up_port)], up_url + '/health')], []
    try:
        urls = {'direct': up_url + '/v1/chat/completions'}
        for kind in LIMITS:
            port = free_port()
            procs.append(start(['--serve-gateway', str(port), up_url, 'limits', kind], f'http://127.0.0.1:{port}/metrics'))
            urls[f'limits {kind}'] = f'http://127.0.0.1:{port}/v1/chat/completions'
        for run in range(runs):
            got = interleaved(urls, n_req)[0]
            rows.append(got)
            print(f'run {run + 1}: direct {got["direct"]*1e3:.2f} ms p50; added: ' +
                  ', '.join(f'{k} {(got[k] - got["direct"])*1e3:.3f} ms' for k in urls if k != 'direct'), flush=True)
    finally:
        for p in procs: p.send_signal(signal.SIGINT)
        for p in procs:
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
    added = {k: statistics.median((r[k] - r['direct']) * 1e3 for r in rows) for k in urls if k != 'direct'}
    base = added['limits none']
    print(f'\nmedian of {runs} runs, added p50 (streamed answers of 4 chunks): ' +
          ', '.join(f'{k} {v:.3f} ms ({v - base:+.3f})' for k, v in added.items()))

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--serve-upstream': serve_upstream(int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == '--serve-gateway' and sys.argv[4:5] == ['limits']:
        serve_gateway(int(sys.argv[2]), sys.argv[3], True, sys.argv[5])
    elif len(sys.argv) > 1 and sys.argv[1] == '--serve-gateway': serve_gateway(int(sys.argv[2]), sys.argv[3], sys.argv[4:] != ['off'])
    elif len(sys.argv) > 1 and sys.argv[1] == '--observe-cost': print(observe_cost())
    elif len(sys.argv) > 1 and sys.argv[1] == '--serve-essentials': serve_essentials(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == '--serve-proxy': serve_proxy(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) if sys.argv[4:] else 1)
    else:
        ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
        ap.add_argument('--requests', type=int, default=500, help='sequential requests for the latency percentiles')
        ap.add_argument('--litellm', help='a venv with litellm 1.110.2 installed, to add its rows')
        ap.add_argument('--runs', type=int, default=3, help='runs of the latency and relay rows (the best counts)')
        ap.add_argument('--seconds', type=int, default=5, help='seconds of load for each throughput measurement')
        ap.add_argument('--metrics', action='store_true', help="only what the gateway's metrics cost: per row, and added p50 on and off")
        ap.add_argument('--limits', action='store_true', help="only what a limited token costs: added p50 without limits, with rates, with a budget")
        a = ap.parse_args()
        if a.metrics: metrics_cost(a.requests, max(a.runs, 2))
        elif a.limits: limits_cost(a.requests, max(a.runs, 2))
        else: raise SystemExit(0 if main(a.requests, a.litellm, a.runs, a.seconds) else 1)
