"""What the gateway benchmarks share: the fake upstream, the floors (a bare proxy, the essentials), the gateway served
for a benchmark, its peers beside it (LiteLLM from a venv, Portkey's OSS gateway from an npm folder), and the clients
and load generator that measure them.

Not a benchmark itself. Run as a script it serves one of those for another process: `python bench/harness.py
--serve-upstream PORT`, `--serve-gateway PORT UPSTREAM [off | limits KIND]`, `--serve-essentials PORT UPSTREAM`,
`--serve-proxy PORT UPSTREAM [WORKERS]`; `start` runs it so. Scripts in bench/ import it as `harness` (a script's own
folder is on its path).
"""
import asyncio, json, os, re, resource, secrets, shutil, signal, socket, statistics, subprocess, sys, tempfile, time
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


# --- the floors: the least a proxy does, and the least a gateway that keeps a record does ---

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
    uvicorn.run('harness:proxy_from_env', factory=True, workers=workers, **kw)


# --- the gateway, and its peers beside it: LiteLLM, Portkey ---

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
                                        limits={'bench': NamedToken('bench', 'BENCH_TOKEN', **LIMITS[limits.removesuffix(' in redis')])})
    if limits and limits.endswith(' in redis'):   # the same rates, counted in the Redis at $BENCH_REDIS for every process
        from ramabana.redisrates import RedisRates
        kw['rates'] = RedisRates(os.environ['BENCH_REDIS'])
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


# one model, no database, no callbacks, no retries: LiteLLM doing only what the gateway does in these runs (its master
# key comes from LITELLM_MASTER_KEY, which this version requires)
LITELLM_CONFIG = """model_list:
  - model_name: fake
    litellm_params: {model: openai/fake, api_base: UPSTREAM, api_key: sk-dummy}
litellm_settings:
  set_verbose: false
  json_logs: false
  callbacks: []
  success_callback: []
  failure_callback: []
  turn_off_message_logging: true
  request_timeout: 600
  num_retries: 0
general_settings:
  disable_spend_logs: true
  disable_error_logs: true
  allow_requests_on_db_unavailable: true
"""

def start_litellm(venv, upstream, workers=1):
    "((process, port), master key) of a LiteLLM proxy from `venv` in front of `upstream` (with `workers` uvicorn workers), once it is live."
    ll_port, key = free_port(), 'sk-' + secrets.token_hex(8)
    cfg = Path(tempfile.mkdtemp())/'litellm.yaml'
    cfg.write_text(LITELLM_CONFIG.replace('UPSTREAM', upstream + '/v1'))
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


# Portkey's OSS gateway (npm @portkey-ai/gateway on Node 20), pinned, in a folder of its own: made by `install_portkey`
# when missing, or by hand with `npm install --prefix DIR --save-exact @portkey-ai/gateway@1.15.2`.
PORTKEY_VERSION = '1.15.2'

# Loaded before Portkey's server (`node -r`): it listens on 127.0.0.1 only (start-server.js binds every interface and
# has no option for it), and the upstream's answers get headers it may change: on Node, Portkey adds its x-portkey-*
# headers to a streamed answer whose headers are still fetch's immutable ones, and every stream fails with `TypeError:
# immutable` (Portkey-AI/gateway#1550 and #1389 report the same); one copy of the headers an answer mends it.
PORTKEY_PRELOAD = r"""
const net = require('net'), listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (first, ...rest) {
  if (typeof first === 'number') return listen.call(this, first, '127.0.0.1', ...(typeof rest[0] === 'function' ? rest : rest.slice(1)));
  if (first && typeof first === 'object' && first.port !== undefined) return listen.call(this, {...first, host: '127.0.0.1'}, ...rest);
  return listen.call(this, first, ...rest);
};
const fetch0 = globalThis.fetch, Response0 = globalThis.Response;
globalThis.fetch = async (...args) => {
  const r = await fetch0(...args);
  return new Response0(r.body, {status: r.status, statusText: r.statusText, headers: new Headers(r.headers)});
};
"""

def portkey_server(folder) -> Path | None:
    "The start-server.js of Portkey's gateway in `folder`, or None when it is not installed there."
    f = Path(folder)/'node_modules/@portkey-ai/gateway'
    ok = (f/'package.json').is_file() and json.loads((f/'package.json').read_text()).get('version') == PORTKEY_VERSION
    return f/'build/start-server.js' if ok else None


def install_portkey(folder) -> Path:
    "Portkey's gateway installed in `folder` (npm, from whatever registry or cache npm is set to use) unless it is there already; its start-server.js."
    if (s := portkey_server(folder)): return s
    if not shutil.which('npm'): raise SystemExit('no npm here: Portkey\'s gateway needs Node 20 and npm')
    Path(folder).mkdir(parents=True, exist_ok=True)
    print(f'installing @portkey-ai/gateway@{PORTKEY_VERSION} in {folder} (npm) ...', flush=True)
    r = subprocess.run(['npm', 'install', '--prefix', str(folder), '--save-exact', '--ignore-scripts', '--no-audit', '--no-fund',
                        f'@portkey-ai/gateway@{PORTKEY_VERSION}'], capture_output=True, text=True, timeout=600)
    if r.returncode or not (s := portkey_server(folder)): raise SystemExit(f'npm could not install Portkey\'s gateway:\n{r.stdout[-2000:]}{r.stderr[-2000:]}')
    return s


def start_portkey(folder, upstream, prefix=()):
    """((process, port), headers) of Portkey's gateway from `folder` (installed there when missing) on 127.0.0.1, once
    it answers; the headers point a request at `upstream` as an OpenAI-compatible provider (any key will do)."""
    server = install_portkey(folder)
    pre = Path(tempfile.mkdtemp())/'portkey-preload.cjs'
    pre.write_text(PORTKEY_PRELOAD)
    port = free_port()
    p = subprocess.Popen([*prefix, shutil.which('node') or 'node', '-r', str(pre), str(server), f'--port={port}', '--headless'],
                         cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):   # 60 s at most
            if p.poll() is not None: raise SystemExit(f"Portkey's gateway exited ({p.returncode}) before it answered")
            try:
                if httpx.get(f'http://127.0.0.1:{port}/', timeout=1).status_code == 200: break
            except httpx.HTTPError: pass
            time.sleep(0.1)
        else: raise SystemExit("Portkey's gateway did not answer within 60 s")
    except BaseException: p.kill(); p.wait(); raise
    headers = {'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream + '/v1', 'Authorization': 'Bearer anything'}
    return (p, port), headers


def rss_mib(pid):
    for line in open(f'/proc/{pid}/status'):
        if line.startswith('VmRSS:'): return int(line.split()[1]) / 1024


# --- a Python client ---

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


# --- wrk, and what processes spent ---

TICK = os.sysconf('SC_CLK_TCK')


def ensure_wrk() -> str:
    "The path of `wrk`, installed from Debian's packages when missing."
    if w := shutil.which('wrk'): return w
    if os.geteuid() != 0: raise SystemExit('wrk is not installed: apt-get install wrk')
    print('installing wrk (apt-get install wrk) ...', flush=True)
    subprocess.run(['apt-get', 'update', '-qq'], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(['apt-get', 'install', '-y', '-qq', 'wrk'], check=True, stdout=subprocess.DEVNULL)
    return shutil.which('wrk')


def pin(core) -> list:
    "A `taskset` prefix for `core` when the machine has more than one."
    return ['taskset', '-c', str(core)] if (os.cpu_count() or 1) > 1 and shutil.which('taskset') else []


def cpu_seconds(pid) -> float:
    "User and system CPU seconds of process `pid` so far."
    f = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def machine_busy() -> float:
    "CPU seconds the whole machine has spent busy (all cores, every process) so far, from /proc/stat."
    f = [int(x) for x in open('/proc/stat').readline().split()[1:]]
    return (sum(f[:8]) - f[3] - f[4]) / TICK   # all but idle and iowait; guest time is already in user


def _ms(v, unit): return float(v) * {'us': 1e-3, 'ms': 1.0, 's': 1e3}[unit]


def wrk(url, body, conns, seconds, wrk_bin, prefix=None, headers=None):
    "(req/s, p50 ms, p99 ms, wrk's CPU share of its core) for `conns` connections posting `body` for `seconds`."
    lua = Path(tempfile.mkdtemp())/'post.lua'
    lua.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(json.dumps(body))}\nwrk.headers["Content-Type"] = "application/json"\n'
                   + ''.join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in (headers or {}).items()))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([*(pin(1) if prefix is None else prefix), wrk_bin, '-t1', f'-c{conns}', f'-d{int(seconds)}s', '--timeout', '10s', '--latency', '-s', str(lua), url],
                         capture_output=True, text=True, check=True).stdout
    wall, after = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / wall
    if 'Non-2xx' in out or 'Socket errors' in out: raise SystemExit(f'wrk saw errors:\n{out}')
    lat = {p: _ms(v, u) for p, v, u in re.findall(r'^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$', out, re.M)}
    if set(lat) != {'50', '99'}: raise SystemExit(f'no latency distribution in what wrk printed:\n{out}')
    rps = float(re.search(r'Requests/sec:\s+([\d.]+)', out)[1])
    return rps, lat['50'], lat['99'], own


def tree_cpu(pid) -> float:
    "CPU seconds of `pid` and its descendants (a `serve --workers N` parent and its workers)."
    kids = Path(f'/proc/{pid}/task/{pid}/children')
    return cpu_seconds(pid) + sum(tree_cpu(int(k)) for k in (kids.read_text().split() if kids.exists() else []))


def serve_workers(port, upstream, workers, data):
    "`ramabana serve --workers N` with the fake model at `upstream`, once it answers."
    cfg = Path(data)/'config.toml'
    cfg.write_text(f'[model.fake]\nruntime = "llamacpp"\nbase_url = "{upstream}/v1"\nctx = 4096\n')
    env = dict(RAMABANA_CONFIG=str(cfg), RAMABANA_DATA_DIR=str(data))
    p = subprocess.Popen([sys.executable, '-m', 'ramabana.cli', 'serve', '--port', str(port), '--workers', str(workers)],
                         env={**os.environ, **env}, stdout=subprocess.DEVNULL)
    url = f'http://127.0.0.1:{port}/health'
    import httpx
    for _ in range(600):
        try:
            if httpx.get(url, timeout=1).status_code == 200: return p
        except httpx.HTTPError: pass
        time.sleep(0.05)
    p.kill(); raise SystemExit(f'ramabana serve --workers {workers} did not start')


def stop(procs):
    for p in procs: p.send_signal(signal.SIGINT)
    for p in procs:
        try: p.wait(15)
        except subprocess.TimeoutExpired: p.kill()


WHOLE, STREAM = ('whole', 4, False), ('stream 64', 64, True)


if __name__ == '__main__':
    what, args = sys.argv[1] if len(sys.argv) > 1 else '', sys.argv[2:]
    if what == '--serve-upstream': serve_upstream(int(args[0]))
    elif what == '--serve-gateway' and args[2:3] == ['limits']: serve_gateway(int(args[0]), args[1], True, args[3])
    elif what == '--serve-gateway': serve_gateway(int(args[0]), args[1], args[2:] != ['off'])
    elif what == '--serve-essentials': serve_essentials(int(args[0]), args[1])
    elif what == '--serve-proxy': serve_proxy(int(args[0]), args[1], int(args[2]) if args[2:] else 1)
    else: raise SystemExit(__doc__)
