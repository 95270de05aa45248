"""What the gateway's own request path costs, in-process and without any network: `open_call`, the answer's chunks,
the row and its commit, for a whole 4-token-sized answer from a function upstream; then `open_call`, `Gateway.target`,
`Gateway.route` and `extract_client_sampling` alone; then a whole call stage by stage, with the metrics counting as
the served gateway's do, as shares of the call.

Run: `python bench/request_path.py [N] [ROUNDS]` (default 2,000 calls, 5 rounds; prints the best round and the
median). On a shared machine compare two versions by running them in turn, several times (`PYTHONPATH` at each).
"""
import asyncio, statistics, sys, tempfile, time
from pathlib import Path
import uvloop
from ramabana.core import ModelSpec
from ramabana.gateway import Gateway
from ramabana.ledger import Ledger
from ramabana.upstream import Call, Capabilities, FunctionUpstream, register_upstream
from ramabana.sampling import extract_client_sampling

register_upstream('function', FunctionUpstream)
BODY = {'model': 'fn', 'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': 4, 'stream': False}

def per(f, n) -> float:
    "µs a call of `f`, over `n` calls."
    t = time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter() - t) / n * 1e6

async def aper(f, n) -> float:
    "µs a call of the coroutine function `f`, over `n` calls."
    t = time.perf_counter()
    for _ in range(n): await f()
    return (time.perf_counter() - t) / n * 1e6

async def main(n:int, rounds:int):
    gw = Gateway(ledger=Ledger(Path(tempfile.mkdtemp())/'l.sqlite'), models={'fn': ModelSpec('fn', 'function')})
    gw.upstream(gw.spec('fn')).caps = Capabilities(source='props')   # as a llama-server that said what it supports
    async def whole():
        ex = await gw.open_call(dict(BODY), {}, time.perf_counter())
        async for _ in ex.chunks(): pass
        ex.finish(200)
        await gw.ledger.committed(ex.ticket)
    async def opened(): return await gw.open_call(dict(BODY), {}, time.perf_counter())
    call = Call(gw.spec('fn'))
    async def target(): return await gw.target('fn', BODY, call)
    for _ in range(200): await whole()   # warm-up
    res = {}
    for _ in range(rounds):
        res.setdefault('a whole call (open_call, chunks, finish, commit)', []).append(await aper(whole, n))
        res.setdefault('open_call', []).append(await aper(opened, n))
        res.setdefault('Gateway.target (sampling, history)', []).append(await aper(target, n))
        res.setdefault('Gateway.route', []).append(per(lambda: gw.route('fn'), n))
        res.setdefault('extract_client_sampling', []).append(per(lambda: extract_client_sampling(BODY), n))
    print(f'| µs, best of {rounds} rounds of {n} (median) | |\n|---|---|')
    for k, v in res.items(): print(f'| {k} | {min(v):.1f} ({statistics.median(v):.1f}) |')
    print(f'\n{stages_table(gw, await stages(gw, n))}')
    gw.ledger.close()

STAGES = ('open_call (route, sampling, history, the call)', "the answer's chunks through the layers",
          'finish (the row, its cost, the metrics)', "the row's commit before answering", "the answer's JSON and headers")

async def stages(gw, n:int) -> list[float]:
    "Seconds spent in each of STAGES over `n` whole calls, the metrics attached as `make_app` attaches them."
    from ramabana.chat import json_bytes
    from ramabana.doors import CHAT_DOOR, call_headers
    from ramabana.telemetry import metrics_for
    metrics_for(gw)
    spent = [0.0] * len(STAGES)
    for _ in range(n):
        t = [time.perf_counter()]
        ex = await gw.open_call(dict(BODY), {}, t[0]); t.append(time.perf_counter())
        async for _ in ex.batches(): pass
        t.append(time.perf_counter())
        ex.finish(200); t.append(time.perf_counter())
        await gw.ledger.committed(ex.ticket); t.append(time.perf_counter())
        json_bytes(CHAT_DOOR.whole(ex, BODY)); call_headers(ex); t.append(time.perf_counter())
        for i in range(len(STAGES)): spent[i] += t[i + 1] - t[i]
    return spent

def stages_table(gw, spent:list[float]) -> str:
    "The stages' shares of a whole call, as a table."
    total = sum(spent)
    return ('| a whole call, stage by stage | share |\n|---|---|\n' +
            '\n'.join(f'| {k} | {v / total:.0%} |' for k, v in zip(STAGES, spent)))

if __name__ == '__main__':
    uvloop.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 5))
