"""What `LocalHTTP` alone costs to read a llama-server-like stream: CPU µs an event, one event an HTTP chunk.

Run: `python bench/local_http.py [MODULE_OR_FILE ...]` (default `ramabana.localhttp`; a path to a copy of an older
localhttp.py compares versions, e.g. `git show REV:ramabana/localhttp.py | sed 's/^from \\.\\([a-z_]*\\) import/from
ramabana.\\1 import/' > /tmp/old.py`). The fake upstream of harness.py streams 4,000 events, one a write;
each module reads 15 streams (after one to warm up), in turn; the table has the fewest and the median CPU µs an
event of this process (the upstream's own CPU is not counted).
"""
import asyncio, importlib, importlib.util, json, statistics, sys, time
from pathlib import Path
import uvloop
from harness import free_port, start

EVENTS = 4000

def load(name:str):
    "The module `name`, or the Python file at that path."
    if not name.endswith('.py'): return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(Path(name).stem, name)
    m = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

async def per_event(m, url:str, streams:int=15) -> list[float]:
    "CPU µs an event of reading `streams` streams with module `m`'s LocalHTTP."
    body = json.dumps({'model': 'fake', 'messages': [], 'max_tokens': EVENTS, 'stream': True, 'x_one_event_per_write': True}).encode()
    lh, res = m.LocalHTTP(), []
    async def one():
        async with lh.stream('POST', url, content=body) as r:
            async for _ in r.aiter_bytes(): pass
    await one()
    for _ in range(streams):
        t = time.process_time()
        await one()
        res.append((time.process_time() - t) / (EVENTS + 3) * 1e6)   # the events, the finish, the usage, [DONE]
    await lh.aclose()
    return res

def main(names:list[str]):
    port = free_port()
    up = start(['--serve-upstream', str(port)], f'http://127.0.0.1:{port}/health')
    try:
        mods = [(n, load(n)) for n in names]
        got = {n: [] for n in names}
        for _ in range(3):   # in turn, so the machine's load falls on all alike
            for n, m in mods: got[n] += uvloop.run(per_event(m, f'http://127.0.0.1:{port}/v1/chat/completions', 5))
    finally: up.terminate(); up.wait(10)
    print('| module | fewest µs an event | median |\n|---|---|---|')
    for n, v in got.items(): print(f'| {n} | {min(v):.2f} | {statistics.median(v):.2f} |')

if __name__ == '__main__': main(sys.argv[1:] or ['ramabana.localhttp'])
