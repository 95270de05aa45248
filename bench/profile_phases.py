"""Where a request's time goes in the gateway, by phase: py-spy samples bench/gateway_inprocess.py and each sample is
given to the phase of the deepest frame it names (PHASES, most specific first), the rest to the event loop (uvloop's C
code and asyncio's own frames) or to `other` (start-up, the bench's client). The ledger's writer thread waiting for
work is not counted; its writing is.

A sample is a moment a thread was busy, which is what a profile of a flat path needs: no frame of the gateway holds more
than a few percent (`py-spy top`), so the phases say where the time goes and the frames do not.

Run: `python bench/profile_phases.py [MODE] [N] [APP]` (MODE of gateway_inprocess.py, default whole; N requests, default
20,000; APP gateway, essentials or proxy; under a minute). Needs py-spy (`pip install py-spy`) and permission to trace
the child it starts (root, or ptrace_scope 0).
"""
import collections, os, re, shutil, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).parent
RATE = 400   # samples a second: py-spy slows the process it samples by a few percent at this rate
PHASES = (   # (phase, marks in a frame's name): the deepest frame with a mark decides
    ('metrics', ('GatewayMetrics.', 'prometheus_client/')),
    ('ledger: the commit', ('Ledger._commit_turn', 'Ledger._loop_commit', 'Ledger._writer', 'commit_turn (harness')),
    ('ledger: the row', ('Exchange.finish', 'Ledger.record', 'now_iso')),
    ('chunks: checked', ('parse_chunk', 'well_formed')),
    ('chunks: assembled', ('Assembler.', 'ToolCallRepair.', 'has_output')),
    ('upstream: reading events', ('_batches (ramabana/upstream', 'sse_batches', '_events (ramabana', 'Dechunker.',
                                  'ReadClock.', 'feed (ramabana/localhttp', 'StreamReader.')),
    ('upstream: sending the request', ('LocalHTTP.', '_Opened.', 'OpenAIChatUpstream.', 'prepare (ramabana/',
                                       'new_call_id', 'Call.__init__', 'StreamWriter.', 'Pool.post')),
    ('opening the call: route, sampling, history', ('Gateway.open_call', 'Gateway.target', 'Gateway.route',
                                                    'Gateway.catalog', 'Gateway.prepared', 'Gateway.upstream')),
    ('the request read and checked', ('read_json', 'check_request', 'check_auth', 'gateway_headers')),
    ('the answer and its headers', ('call_headers', 'ChatDoor.whole', 'starlette/', 'EventStream.', 'door_stream',
                                    'ChatEvents.', 'sse_chunks', 'Channel.', 'bursts')),
    ('layers: door, failover, deadlines', ('watch (ramabana', 'Exchange.', 'head_of', 'unless_gone', 'serve_door',
                                           'GatewayApp.', 'answer (ramabana', 'essentials_app.', 'proxy_app.')),
)
IDLE = ('Condition.wait', 'Event.wait', 'Lock.acquire')   # a thread waiting, not working
START_UP = ('importlib._bootstrap', '(ssl.py)', 'make_app (', 'Gateway.__init__')   # imports, the HTTP client's TLS context: once a process

def phase_of(frames:list[str]) -> str:
    "The phase of one sample's stack (root first)."
    if any(m in f for f in frames for m in START_UP): return 'other'
    for f in reversed(frames):
        for phase, marks in PHASES:
            if any(m in f for m in marks): return phase
    leaf = frames[-1]
    if leaf.startswith(('Runner.run', 'run (uvloop')) or 'asyncio/' in leaf: return 'event loop'
    return 'other'

def phases(raw:Path) -> collections.Counter:
    "Samples by phase, from py-spy's raw (folded) output."
    got = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, n = line.rsplit(' ', 1)
        frames = [re.sub(r':\d+\)$', ')', f) for f in stack.split(';')]
        if frames[-1].startswith(IDLE): continue
        got[phase_of(frames)] += int(n)
    return got

def main(mode:str='whole', n:int=20_000, app:str='gateway'):
    spy = shutil.which('py-spy') or str(Path(sys.executable).parent/'py-spy')
    if not os.path.exists(spy): raise SystemExit('py-spy is not installed: pip install py-spy')
    raw = Path(tempfile.mkdtemp())/'samples.txt'
    try:
        subprocess.run([spy, 'record', '-r', str(RATE), '--format', 'raw', '-o', str(raw), '--', sys.executable,
                        str(HERE/'gateway_inprocess.py'), mode, str(n), app], check=True, cwd=HERE)
        got = phases(raw)
    finally: shutil.rmtree(raw.parent)
    work, us = sum(v for k, v in got.items() if k != 'other'), 1e6 / RATE / n   # µs of busy time a sample stands for, a request
    print(f'\n| {app}, {mode}: phase | share of the busy samples | samples | busy µs a request |\n|---|---|---|---|')
    for k, v in sorted(got.items(), key=lambda kv: (kv[0] == 'other', -kv[1])):
        if k != 'other': print(f'| {k} | {v / work:.1%} | {v:,} | {v * us:.0f} |')
    print(f'| all of the above | 100% | {work:,} | {work * us:.0f} |\n| other (start-up, the bench\'s client) | | {got["other"]:,} | |')

if __name__ == '__main__':
    a = sys.argv[1:]
    main(a[0] if a else 'whole', int(a[1]) if len(a) > 1 else 20_000, a[2] if len(a) > 2 else 'gateway')
