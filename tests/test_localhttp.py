"""LocalHTTP, the gateway's own HTTP/1.1 client for loopback servers ([05db_localhttp](../nbs/05db_localhttp.ipynb)),
against a raw server that answers like llama-server.

The ways a kept-alive connection dies and what the pool does about each, the read timeout as a limit on each wait,
one timer a request, and a pooled connection reset underneath, on asyncio's loop and on uvloop. `RawServer` listens
on 127.0.0.1 only; every wait is bounded (read timeouts under a second, polls of at most 3 s, a thread joined within 60 s).
"""
import asyncio, re, socket, struct, threading
import httpx
import uvloop
from fastcore.test import test_eq as eq   # renamed: pytest would collect a test_* name as a test
from ramabana.localhttp import LocalHTTP

class RawServer:
    "A loopback HTTP/1.1 server: `/chunked` streams a chunked body then closes silently, anything else answers `ok`."
    def __init__(self): self.conns, self.drop_next, self.heads, self.open = 0, False, [], []
    def reset_all(self):
        "Reset every open connection (a close with SO_LINGER 0 sends RST), as a server that is killed does."
        for w in self.open:
            w.get_extra_info('socket').setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
            w.transport.abort()
        self.open = []
    async def serve(self, r, w):
        self.conns += 1; self.open.append(w)
        try:
            while (head := await r.readuntil(b'\r\n\r\n')):
                self.heads.append(head.decode('latin-1').lower())
                if self.drop_next: self.drop_next = False; return
                n = int(re.search(rb'Content-Length: (\d+)', head)[1]); await r.readexactly(n)
                if b' /silent ' in head: await r.read(1); return   # never answers: waits for the client to go
                if b' /drip ' in head or b' /stall ' in head:   # a chunk every 0.1 s, six in all; or one, then silence
                    w.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
                    for _ in range(6 if b' /drip ' in head else 1):
                        w.write(b'1\r\nx\r\n'); await w.drain(); await asyncio.sleep(0.1)
                    if b' /stall ' in head: await r.read(1); return
                    w.write(b'0\r\n\r\n'); await w.drain(); return
                if b' /split ' in head:   # a chunked body with an extension and a trailer, a byte a write
                    w.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
                    for b in b'5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n':
                        w.write(bytes([b])); await w.drain(); await asyncio.sleep(0.001)
                    continue
                if b' /chunked ' in head or b' /kept ' in head:
                    w.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n'); await w.drain()
                    if b' /chunked ' in head: return
                    continue
                w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'); await w.drain()
        except asyncio.IncompleteReadError: pass   # the client closed its end
        finally: w.close()
    async def __aenter__(self):
        self.srv = await asyncio.start_server(self.serve, '127.0.0.1', 0)
        self.url = f'http://127.0.0.1:{self.srv.sockets[0].getsockname()[1]}'
        return self
    async def __aexit__(self, *a):
        self.srv.close()
        for w in self.open: w.close()   # kept-alive connections too: from Python 3.12 `wait_closed` waits for every one
        await self.srv.wait_closed()

def run(coro, timeout:float=60):
    "Run `coro` on a new asyncio loop, failing after `timeout` seconds."
    return asyncio.run(asyncio.wait_for(coro, timeout))

def test_kept_alive_connections_die():
    "A close after a stream (learnt), a kept stream (pooled), a close as the next request comes (GET resent, POST raised), one Content-Type."
    async def main():
        lh = LocalHTTP()
        async def get(url, method='GET'):
            async with lh.stream(method, url) as r: return await r.aread()
        idle = lambda: sum(map(len, lh._idle.values()))
        async with RawServer() as rs:
            key = lh._split(rs.url)[0]
            eq([await get(f'{rs.url}/kept'), await get(f'{rs.url}/kept', 'POST'), await get(f'{rs.url}/split'), await get(f'{rs.url}/x')],
               [b'hi'] * 2 + [b'hello world', b'ok'])
            eq((rs.conns, idle(), lh.closes_streams), (1, 1, set()))   # a server that keeps them: one connection for all
            eq(await get(f'{rs.url}/chunked'), b'hi')    # on the same connection; this one closes it after the stream, unannounced
            eq(idle(), 1)                                # not known yet: kept
            await asyncio.sleep(0.05)                    # the close arrives
            eq(await get(f'{rs.url}/x'), b'ok')          # the dead connection is passed over, and the server noted
            eq((rs.conns, lh.closes_streams), (2, {key}))
            eq(await get(f'{rs.url}/chunked'), b'hi')
            eq(idle(), 0)                                # known now: closed after its stream, not pooled
            eq([await get(f'{rs.url}/x'), await get(f'{rs.url}/x')], [b'ok', b'ok'])
            eq((rs.conns, idle()), (3, 1))               # the plain answers shared one kept-alive connection
            lh.closes_streams.clear()   # a close that comes only with the next request: a POST on it goes again, unrecorded
            await get(f'{rs.url}/kept'); rs.drop_next = True
            eq(await get(f'{rs.url}/x', 'POST'), b'ok')
            eq((rs.conns, lh.closes_streams), (4, {key}))
            rs.drop_next = True
            eq(await get(f'{rs.url}/x'), b'ok')          # the pooled connection died; the GET went again on a new one
            eq(rs.conns, 5)
            await get(f'{rs.url}/x'); rs.drop_next = True
            try: await get(f'{rs.url}/x', 'POST'); raise AssertionError('no error')
            except httpx.RemoteProtocolError as e: assert 'without sending a response' in str(e)
            eq(await get(f'{rs.url}/x', 'POST'), b'ok')  # and the next request finds a new connection
            async with lh.stream('POST', f'{rs.url}/x', content=b'{}', headers={'Content-Type': 'application/json'}) as r: await r.aread()
            async with lh.stream('POST', f'{rs.url}/x', content=b'{}') as r: await r.aread()
            eq([h.count('content-type:') for h in rs.heads[-2:]], [1, 1])   # the caller's, else our own: never two
            eq(rs.heads[0].count('content-type:'), 0)                       # a GET without a body has none
        await lh.aclose()
    run(main())

def test_read_timeout_is_a_limit_on_each_wait():
    "A server that never answers is a read timeout; 0.6 s of chunks 0.1 s apart pass a limit of 0.25 s, one chunk then silence does not."
    async def main():
        async with RawServer() as rs:
            quick = LocalHTTP(httpx.Timeout(10, read=0.2))   # a server that takes the request and never answers: a read timeout
            try: await quick.stream('POST', f'{rs.url}/silent', content=b'{}').__aenter__(); raise AssertionError('no error')
            except httpx.ReadTimeout as e: eq(str(e), 'timed out waiting for the answer')
            quick = LocalHTTP(httpx.Timeout(10, read=0.25))
            async with quick.stream('POST', f'{rs.url}/drip', content=b'{}') as r: eq(await r.aread(), b'x' * 6)
            try:
                async with quick.stream('POST', f'{rs.url}/stall', content=b'{}') as r: await r.aread()
                raise AssertionError('no error')
            except httpx.ReadTimeout as e: eq(str(e), 'read timed out')
            await quick.aclose()
    run(main())

async def timers_armed(url):
    "How many timers the event loop was asked for during one request to `url` on a kept-alive connection."
    loop, n, c = asyncio.get_running_loop(), [0], LocalHTTP()
    async with c.stream('GET', url) as r: await r.aread()   # the connection, made before the count
    call_at = loop.call_at
    def counted(*a, **kw): n[0] += 1; return call_at(*a, **kw)
    loop.call_at = counted
    try:
        async with c.stream('GET', url) as r: await r.aread()
    finally: del loop.call_at
    await c.aclose()
    return n[0]

def test_one_timer_a_request():
    "One timer times all of a request's reads, the head's and the body's, however many reads it takes."
    async def main():
        async with RawServer() as rs: return [await timers_armed(f'{rs.url}/x'), await timers_armed(f'{rs.url}/kept')]
    eq(run(main()), [1, 1])

async def reset_while_pooled():
    "A GET, then a reset of the pooled connection before a GET and before a POST: (the answers, the connections made)."
    c = LocalHTTP()
    async def ask(method='GET'):
        async with c.stream(method, f'{rs.url}/x', content=b'{}' if method == 'POST' else b'') as r: return await r.aread()
    async with RawServer() as rs:
        got = [await ask()]
        for method in ('GET', 'POST'):
            rs.reset_all()
            for _ in range(300):   # until the pooled connection has seen the reset (at most 3 s)
                if all(r.at_eof() or r.exception() for pool in c._idle.values() for r, _ in pool): break
                await asyncio.sleep(0.01)
            got.append(await ask(method))
    await c.aclose()
    return got, rs.conns

def test_reset_while_pooled():
    "A pooled connection reset underneath is not used again, on asyncio's loop and on uvloop: each request goes on a new one."
    eq(run(reset_while_pooled()), ([b'ok'] * 3, 3))
    res = {}
    t = threading.Thread(target=lambda: res.update(v=uvloop.run(reset_while_pooled()))); t.start(); t.join(60)
    eq(res['v'], ([b'ok'] * 3, 3))
