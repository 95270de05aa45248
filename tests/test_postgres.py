"""A ledger shared by several gateways, in a real PostgreSQL server.

Debian's `postgresql` package (`./dev test` installs it when missing) gives `initdb` and `pg_ctl`; each test module
starts a server in a temporary data directory, as the unprivileged `postgres` user when running as root, on a
loopback port, and stops it at the end. Without the package these tests skip, saying so.
"""
import glob, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest
import httpx

def _pg_bin() -> Path|None:
    if (p := shutil.which('initdb')): return Path(p).parent
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    return Path(found[-1]).parent if found else None

PG = _pg_bin()
if PG is None:
    pytest.skip("PostgreSQL is not installed here: ./dev test installs Debian's postgresql; this machine could not", allow_module_level=True)
pytest.importorskip('psycopg', reason="psycopg is not installed: pip install 'ramabana[postgres]'")

def free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

class Postgres:
    "A throwaway PostgreSQL server on 127.0.0.1: `start`, `stop`, `restart`, and its `url`."
    def __init__(self, root:Path):
        self.root, self.port = root, free_port()
        self.user = ['runuser', '-u', 'postgres', '--'] if os.geteuid() == 0 else []   # postgres refuses to run as root
        if self.user: shutil.chown(root, 'postgres')
        self.run([PG/'initdb', '-D', root/'data', '-A', 'trust', '-U', 'ramabana'])
        self.url = f'postgresql://ramabana@127.0.0.1:{self.port}/postgres'

    def run(self, argv):
        r = subprocess.run([*self.user, *map(str, argv)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (argv, r.stdout[-2000:], r.stderr[-2000:])

    def start(self):
        self.run([PG/'pg_ctl', '-D', self.root/'data', '-l', self.root/'log', '-w', 'start',
                  '-o', f'-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1'])

    def stop(self, mode='fast'): self.run([PG/'pg_ctl', '-D', self.root/'data', '-w', 'stop', '-m', mode])

@pytest.fixture(scope='module')
def pg():
    root = Path(tempfile.mkdtemp(prefix='ramabana-pg-'))
    srv = Postgres(root)
    srv.start()
    try: yield srv
    finally:
        try: srv.stop('immediate')
        finally: shutil.rmtree(root, ignore_errors=True)

def serve(tmp:Path, upstream:str, url:str) -> tuple:
    "A `ramabana serve` process writing its ledger to `url`, with the model `k` at `upstream`; (process, base URL)."
    cfg, port = tmp/f'config-{len(list(tmp.glob("config-*")))}.toml', free_port()
    cfg.write_text(f'[model.k]\nruntime = "llamacpp"\nbase_url = "{upstream}/v1"\nctx = 4096\n')
    env = {**os.environ, 'RAMABANA_CONFIG': str(cfg), 'RAMABANA_DATA_DIR': str(tmp/f'data-{port}'), 'RAMABANA_LEDGER_URL': url}
    p = subprocess.Popen([sys.executable, '-m', 'ramabana.cli', 'serve', '--port', str(port)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f'http://127.0.0.1:{port}'
    for _ in range(300):
        try:
            if httpx.get(base + '/health', timeout=1).status_code in (200, 401): return p, base   # 401: up, and wanting a key
        except httpx.HTTPError: pass
        if p.poll() is not None: raise AssertionError(p.stderr.read())
        time.sleep(0.1)
    p.kill(); raise AssertionError('ramabana serve did not start')

def calls(base:str, n_clients:int, per:int) -> list[str]:
    "`n_clients` clients at once, `per` calls each, through the gateway at `base`; the call ids (every answer a 200)."
    def client(i):
        with httpx.Client(base_url=base + '/v1', timeout=60) as c:
            rs = [c.post('/chat/completions', json={'model': 'k', 'messages': [{'role': 'user', 'content': f'client {i}, call {j}'}]})
                  for j in range(per)]
        assert all(r.status_code == 200 for r in rs), [r.text for r in rs if r.status_code != 200][:2]
        return [r.headers['x-ramabana-call-id'] for r in rs]
    with ThreadPoolExecutor(n_clients) as ex: return [x for ids in ex.map(client, range(n_clients)) for x in ids]

def rows(url:str) -> list[str]:
    import psycopg
    with psycopg.connect(url) as con: return [r[0] for r in con.execute('SELECT id FROM model_calls')]

def test_two_gateways_one_ledger(pg, tmp_path):
    "Two gateway processes, 100 clients each at once: every answer is one row in PostgreSQL, none lost or doubled; `ramabana calls` reads them."
    from ramabana.llama_double import FakeLlamaServer
    before = set(rows(pg.url)) if _has_table(pg.url) else set()
    with FakeLlamaServer() as fake:
        gws = [serve(tmp_path, fake.url, pg.url) for _ in range(2)]
        try:
            with ThreadPoolExecutor(2) as ex: ids = [x for got in ex.map(lambda g: calls(g[1], 100, 2), gws) for x in got]
        finally:
            for p, _ in gws: p.send_signal(signal.SIGTERM)
            for p, _ in gws: p.wait(60)
    new = [r for r in rows(pg.url) if r not in before]
    assert len(ids) == 400 and len(new) == 400 and set(new) == set(ids), (len(ids), len(new))
    r = subprocess.run([sys.executable, '-m', 'ramabana.cli', 'calls', '3'], capture_output=True, text=True, timeout=60,
                       env={**os.environ, 'RAMABANA_LEDGER_URL': pg.url, 'RAMABANA_DATA_DIR': str(tmp_path/'cli')})
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == 5 and all(re.split(r'\s{2,}', l)[1] == 'k' for l in lines[2:]), (r.stdout, r.stderr)

def _has_table(url) -> bool:
    import psycopg
    with psycopg.connect(url) as con: return con.execute("SELECT to_regclass('model_calls') IS NOT NULL").fetchone()[0]

def test_gateway_keeps_answering_while_postgres_restarts(pg, tmp_path):
    "PostgreSQL stops and comes back under load: every call is answered, and the rows written meanwhile reach it."
    from ramabana.llama_double import FakeLlamaServer
    before = set(rows(pg.url)) if _has_table(pg.url) else set()
    with FakeLlamaServer() as fake:
        p, base = serve(tmp_path, fake.url, pg.url)
        try:
            ids = calls(base, 20, 2)
            pg.stop()
            ids += calls(base, 20, 2)   # answered while the database is away
            pg.start()
            ids += calls(base, 20, 2)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(set(rows(pg.url)) - before) < len(ids): time.sleep(0.5)
        finally:
            p.send_signal(signal.SIGTERM); p.wait(60)
    new = set(rows(pg.url)) - before
    assert new == set(ids) and len(ids) == 120, (len(new), len(ids))

def test_spend_in_postgres(pg, tmp_path):
    "`spend` gives the same sums from PostgreSQL as from SQLite: one query, nulls last, integers back as integers."
    import psycopg
    from ramabana.ledger import Ledger, now_iso
    from ramabana.pgledger import PgLedger
    with psycopg.connect(pg.url, autocommit=True) as con: con.execute('CREATE DATABASE spend')   # only this test's rows
    day = 1_764_547_200   # 2025-12-01 00:00 UTC
    rows_ = [dict(id=f's{i}', time=now_iso(day + 3600 * i), token=tok, model=m, answered_by=m, prompt_tokens=p,
                  completion_tokens=c, cost_usd=usd)
             for i, (tok, m, p, c, usd) in enumerate([('alice', 'gpt-4.1', 1000, 100, 0.0028), ('ci', 'svc', 500, 50, None),
                                                       ('ci', 'gpt-4.1', 3000, 300, 0.0084), (None, 'smollm2', None, None, 0.0)])]
    got = {}
    for name, led in (('pg', PgLedger(pg.url.rsplit('/', 1)[0] + '/spend', log_path=tmp_path/'pg.jsonl')),
                      ('sqlite', Ledger(tmp_path/'l.sqlite'))):
        try:
            for r in rows_: led.record(r)
            led.flush()
            got[name] = [led.spend(by, since) for by, since in (('model', None), ('token', '2025-12-01T01:00:00Z'), ('day', None))]
        finally: led.close()
    assert got['pg'] == got['sqlite'], got
    assert [(r['grp'], r['calls'], r['prompt_tokens'], r['unpriced']) for r in got['pg'][0]] == \
           [('gpt-4.1', 2, 4000, 0), ('smollm2', 1, None, 0), ('svc', 1, 500, 1)], got['pg'][0]
    assert [r['grp'] for r in got['pg'][1]] == ['ci', None] and isinstance(got['pg'][0][0]['prompt_tokens'], int)

def test_stored_keys_across_gateways(pg, tmp_path):
    "A key made with `ramabana token add` works on two running gateways within their refresh, and a revoked one stops; the key is stored nowhere."
    from ramabana.llama_double import FakeLlamaServer
    env = {'RAMABANA_KEY_SECRET': 'pg team secret', 'RAMABANA_GATEWAY_KEYS_REFRESH': '0.5', 'RAMABANA_ADMIN_TOKEN': 'pg admin token'}
    def token(*args):
        r = subprocess.run([sys.executable, '-m', 'ramabana.cli', 'token', *args], capture_output=True, text=True, timeout=60,
                           env={**os.environ, **env, 'RAMABANA_LEDGER_URL': pg.url, 'RAMABANA_DATA_DIR': str(tmp_path/'cli')})
        assert r.returncode == 0, r.stderr
        return r.stdout
    def status(base, key):
        return httpx.post(base + '/v1/chat/completions', headers={'Authorization': f'Bearer {key}'}, timeout=30,
                          json={'model': 'k', 'messages': [{'role': 'user', 'content': 'hi'}]}).status_code
    def within(seconds, cond):
        end = time.monotonic() + seconds
        while not cond():
            if time.monotonic() > end: return False
            time.sleep(0.1)
        return True
    old = os.environ.copy(); os.environ.update(env)
    try:
        with FakeLlamaServer() as fake:
            gws = [serve(tmp_path, fake.url, pg.url) for _ in range(2)]
            try:
                key = token('add', 'dora', '--rpm', '100').splitlines()[-1]
                assert within(10, lambda: all(status(base, key) == 200 for _, base in gws))   # documented: within keys_refresh
                assert all(status(base, 'rmb_not_a_key') == 401 for _, base in gws)
                r = httpx.delete(gws[0][1] + '/v1/ramabana/keys/dora', headers={'Authorization': 'Bearer pg admin token'}, timeout=30)
                assert r.status_code == 200, r.text   # revoked through the first gateway: refused there at once
                assert status(gws[0][1], key) == 401
                assert within(10, lambda: status(gws[1][1], key) == 401)   # and by the other from its next look
            finally:
                for p, _ in gws: p.send_signal(signal.SIGTERM)
                errs = [p.communicate(timeout=60)[1] for p, _ in gws]
    finally: os.environ.clear(); os.environ.update(old)
    import psycopg
    with psycopg.connect(pg.url) as con:
        dump = json.dumps([con.execute(f'SELECT * FROM {t}').fetchall() for t in ('gateway_keys', 'key_audit', 'key_meta', 'model_calls')], default=str)
    assert key not in dump and all(key not in e for e in errs)
    assert 'dora' in dump and 'revoke' in dump

def cli_token(tmp_path, env:dict, *args) -> str:
    "`ramabana token ARGS` against the PostgreSQL store of `env`; its output (the key is its last line)."
    r = subprocess.run([sys.executable, '-m', 'ramabana.cli', 'token', *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **env, 'RAMABANA_DATA_DIR': str(tmp_path/'cli')})
    assert r.returncode == 0, r.stderr
    return r.stdout

def test_new_key_on_every_worker_at_once(pg, tmp_path):
    "`token add alice --rpm 5`, then 16 calls at once over two `serve --workers 2` sharing Redis: 5 answered, 11 refused for the rate, none for the key."
    from ramabana.testing import BackgroundServer
    red = redis_server()
    if red is None: pytest.skip("Debian's redis-server is not installed: ./dev test installs it; this machine could not")
    env = {'RAMABANA_KEY_SECRET': 'pg team secret', 'RAMABANA_LEDGER_URL': pg.url,
           'RAMABANA_GATEWAY_KEYS_REFRESH': '600'}   # no gateway looks at the store again in this test: each must look the key up
    cfg = tmp_path/'config.toml'
    with BackgroundServer(SlowUpstream(delay=0.05)) as fake:
        cfg.write_text(f'[model.k]\nruntime = "openai_compatible"\nbase_url = "{fake.url}/v1"\nctx = 4096\n\n[limits]\nredis = "{red.url}"\n')
        gws = []
        try:
            for i in range(2):
                port = free_port()
                p = subprocess.Popen([sys.executable, '-m', 'ramabana.cli', 'serve', '--port', str(port), '--workers', '2'],
                                     env={**os.environ, **env, 'RAMABANA_CONFIG': str(cfg), 'RAMABANA_DATA_DIR': str(tmp_path/f'data-{i}')},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                gws.append((p, f'http://127.0.0.1:{port}'))
            for p, base in gws:
                for _ in range(300):
                    try:
                        if httpx.get(base + '/health', timeout=1).status_code in (200, 401): break
                    except httpx.HTTPError: pass
                    if p.poll() is not None: raise AssertionError(p.stderr.read())
                    time.sleep(0.1)
            key = cli_token(tmp_path, env, 'add', 'alice', '--rpm', '5').splitlines()[-1]
            def ask(i):
                return httpx.post(gws[i % 2][1] + '/v1/chat/completions', headers={'Authorization': f'Bearer {key}'}, timeout=60,
                                  json={'model': 'k', 'messages': [{'role': 'user', 'content': f'call {i}'}]}).status_code
            with ThreadPoolExecutor(16) as ex: codes = list(ex.map(ask, range(16)))
            assert codes.count(200) == 5 and codes.count(429) == 11, codes   # the rate is exact, and no worker refused the key
            assert [ask(i) for i in range(2)] == [429, 429]
            assert httpx.post(gws[0][1] + '/v1/chat/completions', headers={'Authorization': 'Bearer rmb_' + 'x' * 43},
                              json={'model': 'k', 'messages': []}, timeout=30).status_code == 401
        finally:
            for p, _ in gws: p.send_signal(signal.SIGTERM)
            for p, _ in gws: p.wait(60)
            red.kill()

class SlowUpstream:
    "An OpenAI-compatible upstream that answers after `delay` seconds and counts the requests it holds at once (`peak`)."
    def __init__(self, delay:float=0.3): self.delay, self.now, self.peak, self.served = delay, 0, 0, 0
    async def __call__(self, scope, receive, send):
        import asyncio
        if scope['type'] != 'http': return
        while (await receive()).get('more_body'): pass
        self.now += 1; self.peak = max(self.peak, self.now)
        try: await asyncio.sleep(self.delay)
        finally: self.now -= 1
        self.served += 1
        body = json.dumps({'id': 'x', 'object': 'chat.completion', 'created': 1, 'model': 'k', 'usage': {'prompt_tokens': 5, 'completion_tokens': 1, 'total_tokens': 6},
                           'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'ok'}, 'finish_reason': 'stop'}]}).encode()
        await send({'type': 'http.response.start', 'status': 200, 'headers': [(b'content-type', b'application/json')]})
        await send({'type': 'http.response.body', 'body': body})

def redis_server() -> subprocess.Popen|None:
    "A throwaway redis-server on a loopback port, nothing saved; None when Debian's redis-server is not installed."
    if not shutil.which('redis-server'): return None
    port = free_port()
    p = subprocess.Popen(['redis-server', '--port', str(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.url = f'redis://127.0.0.1:{port}/0'
    import redis
    for _ in range(100):
        try:
            if redis.Redis.from_url(p.url).ping(): return p
        except redis.exceptions.ConnectionError: time.sleep(0.05)
    p.kill(); raise AssertionError('redis-server did not start')

def test_rates_across_workers_and_gateways(pg, tmp_path):
    "Two `serve --workers 2` on two ports sharing Redis and PostgreSQL: rpm = 30 lets exactly 30 through, max_parallel = 3 holds, Redis stopping is a 503, never a 500, and no row is lost."
    from ramabana.testing import BackgroundServer
    red = redis_server()
    if red is None: pytest.skip("Debian's redis-server is not installed: ./dev test installs it; this machine could not")
    up = SlowUpstream()
    keys = {'RPM_KEY': 'rpm-secret-1234', 'PAR_KEY': 'par-secret-1234', 'FREE_KEY': 'free-secret-1234'}
    cfg = tmp_path/'config.toml'
    with BackgroundServer(up) as fake:
        cfg.write_text(f'[model.k]\nruntime = "openai_compatible"\nbase_url = "{fake.url}/v1"\nctx = 4096\n\n'
                       '[gateway.tokens]\nrpm = { env = "RPM_KEY", rpm = 30 }\npar = { env = "PAR_KEY", max_parallel = 3 }\nfree = "FREE_KEY"\n\n'
                       f'[limits]\nredis = "{red.url}"\nredis_down = "closed"\n')
        env = {**os.environ, **keys, 'RAMABANA_CONFIG': str(cfg), 'RAMABANA_LEDGER_URL': pg.url}
        gws = []
        try:
            for i in range(2):
                port = free_port()
                p = subprocess.Popen([sys.executable, '-m', 'ramabana.cli', 'serve', '--port', str(port), '--workers', '2'],
                                     env={**env, 'RAMABANA_DATA_DIR': str(tmp_path/f'data-{i}')}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                gws.append((p, f'http://127.0.0.1:{port}'))
            for p, base in gws:
                for _ in range(300):
                    try:
                        if httpx.get(base + '/health', headers={'Authorization': f"Bearer {keys['FREE_KEY']}"}, timeout=1).status_code == 200: break
                    except httpx.HTTPError: pass
                    if p.poll() is not None: raise AssertionError(p.stderr.read())
                    time.sleep(0.1)
            def ask(i, key):
                base = gws[i % 2][1]
                return httpx.post(base + '/v1/chat/completions', headers={'Authorization': f'Bearer {keys[key]}'}, timeout=60,
                                  json={'model': 'k', 'messages': [{'role': 'user', 'content': f'call {i}'}]})
            with ThreadPoolExecutor(100) as ex: got = list(ex.map(lambda i: ask(i, 'RPM_KEY'), range(100)))
            codes = [r.status_code for r in got]
            assert codes.count(200) == 30 and codes.count(429) == 70, sorted(set(codes))
            assert all(int(r.headers['retry-after']) >= 1 for r in got if r.status_code == 429)
            up.peak = 0   # the rpm token's 30 calls were at the upstream together
            with ThreadPoolExecutor(100) as ex: got = list(ex.map(lambda i: ask(i, 'PAR_KEY'), range(100)))
            assert up.peak <= 3 and [r.status_code for r in got].count(200) >= 3, (up.peak, sorted({r.status_code for r in got}))
            # Redis stops in the middle of a load: calls in flight finish, later ones get the configured 503, none a 500
            import threading
            stopper = threading.Timer(0.6, lambda: (red.send_signal(signal.SIGTERM), red.wait(10)))
            stopper.start()
            end = time.monotonic() + 2.0
            def load(i):
                out = []
                while time.monotonic() < end: out.append(ask(i, 'PAR_KEY'))
                return out
            with ThreadPoolExecutor(10) as ex: during = [r for rs in ex.map(load, range(10)) for r in rs]
            stopper.join()
            codes = [r.status_code for r in during]
            assert set(codes) <= {200, 429, 503} and 200 in codes and 503 in codes, codes
            par_ok = [r.status_code for r in got].count(200) + codes.count(200)
            down = [ask(i, 'RPM_KEY') for i in range(4)]
            assert [r.status_code for r in down] == [503] * 4 and all(r.json()['error']['code'] == 'limits_unavailable' for r in down)
            assert [ask(i, 'FREE_KEY').status_code for i in range(2)] == [200, 200]   # a key without limits does not need Redis
            health = [httpx.get(base + '/health', headers={'Authorization': f"Bearer {keys['FREE_KEY']}"}).json()['rates'] for _, base in gws]
            assert all(h['when_down'] == 'closed' and isinstance(h['decided_without_redis'], int) for h in health), health
        finally:
            for p, _ in gws: p.send_signal(signal.SIGTERM)
            for p, _ in gws: p.wait(60)
            if red.poll() is None: red.kill()
    import psycopg
    with psycopg.connect(pg.url) as con:
        n = con.execute("SELECT count(*) FROM model_calls WHERE token = 'rpm' AND status = 200").fetchone()[0]
        down = con.execute("SELECT COALESCE(sum(count), 0) FROM refusals WHERE token = 'rpm' AND status = 503").fetchone()[0]
        par = con.execute("SELECT count(*) FROM model_calls WHERE token = 'par' AND status = 200").fetchone()[0]
    assert n == 30 and par == par_ok, (n, par, par_ok)   # every answer has its row in the shared ledger
    assert down == 4, down   # and the calls refused while Redis was away are counted with the refusals
