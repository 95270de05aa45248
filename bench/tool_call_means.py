"""Which of llama-server's means gets valid tool calls out of a local model: its own parser alone, `tool_choice:
required` (a grammar that forces its call format), or its parser plus the gateway reading calls written as text.

Run: `python bench/tool_call_means.py [--model qwen2.5-coder-1.5b] [--n N]` (needs `ramabana setup`; about 16
minutes for the default model on 2 cores: 31 questions, three ways). It starts the model's managed llama-server and
sends each question of bench/agent_tasks.py whose answer needs a tool, with the agent's own system prompt and tools, greedily, three ways:

    native     straight to llama-server, `tool_choice` auto: only what its own parser makes of the answer counts
    required   straight to llama-server with `tool_choice: required`
    gateway    through the gateway (`ramabana.gateway`), which also reads calls written as text (`ramabana.textcalls`)

and prints, for each way, how many answers held at least one call, how many of those calls were valid (a tool of the
request, arguments that fit its schema) and how many answers held none. The questions are only asked, not answered:
no tool runs, so this measures the first step of each task.
"""
import argparse, json, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def questions(n:int|None) -> list[str]:
    "The questions of bench/agent_tasks.py that need a tool, in its order."
    from agent_tasks import all_tasks
    qs = [t.question for t in all_tasks() if t.needs_tool]
    return qs[:n] if n else qs

def request(question:str) -> dict:
    "The first request of an agent turn asking `question`: the magic's system prompt and tools, greedy decoding."
    from ramabana.agent import SYSTEM_PROMPT
    from ramabana.pytools import python_tools
    from ramabana.magic import NOTEBOOK_SP
    from ramabana.conversation import Tool
    def read_cell(id:str) -> str:
        "The full source and outputs of one cell of the user's notebook, including cells left out of the prompt."
    tools = [t.schema for t in python_tools({})] + [Tool(read_cell).schema]
    return dict(messages=[{'role': 'system', 'content': f'{SYSTEM_PROMPT}\n\n{NOTEBOOK_SP}'}, {'role': 'user', 'content': question}],
                tools=tools, temperature=0, top_k=1, max_tokens=256)

def judge(message:dict, tools:list) -> tuple[int, int]:
    "Calls in an answer, and how many of them are valid for `tools`."
    from ramabana.textcalls import as_call, tool_validators
    calls, vs = message.get('tool_calls') or [], tool_validators(tools)
    ok = sum(isinstance(as_call(c.get('function') or {}, vs), dict) for c in calls)
    return len(calls), ok

def direct(url:str, body:dict) -> dict:
    "llama-server's own answer."
    import httpx
    r = httpx.post(url + '/v1/chat/completions', json={**body, 'stream': False}, timeout=600)
    r.raise_for_status()
    return r.json()['choices'][0]['message']

def through_gateway(base:str, model:str, body:dict) -> dict:
    "The gateway's answer (over HTTP, as a client gets it)."
    import httpx
    r = httpx.post(base + '/chat/completions', json={**body, 'model': model, 'stream': False}, timeout=600)
    r.raise_for_status()
    return r.json()['choices'][0]['message']

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--model', default='qwen2.5-coder-1.5b')
    p.add_argument('--n', type=int, default=None, help='only the first N questions')
    a = p.parse_args(argv)
    from ramabana.core import engine_config, resolve
    from ramabana.llamaserver import server_url
    from ramabana.gateway import Gateway
    from ramabana.ledger import Ledger
    from ramabana.app import GatewayServer
    import tempfile
    spec, qs = resolve(a.model), questions(a.n)
    engines = engine_config()   # the same server for the direct calls and the gateway's
    url = server_url(spec, engine_config=engines)
    gws = GatewayServer(Gateway(ledger=Ledger(Path(tempfile.mkdtemp())/'calls.db'), models={spec.name: spec}, engines=engines)).start()
    ways = {'native': lambda b: direct(url, b), 'required': lambda b: direct(url, {**b, 'tool_choice': 'required'}),
            'gateway': lambda b: through_gateway(gws.url, spec.name, b)}
    try:
        rows = {w: dict(answers=0, with_calls=0, calls=0, valid=0, none=0, seconds=0.0) for w in ways}
        for q in qs:
            body = request(q)
            for w, ask in ways.items():
                t = time.monotonic()
                try: m = ask(body)
                except Exception as e:   # one failed request is one answer without calls, said, not the end of the run
                    print(f'{w}: {q[:50]!r}: {type(e).__name__}: {e}', file=sys.stderr); m = {}
                n, ok = judge(m, body['tools'])
                r = rows[w]
                r['answers'] += 1; r['with_calls'] += n > 0; r['calls'] += n; r['valid'] += ok; r['none'] += n == 0
                r['seconds'] += time.monotonic() - t
                print(f'{w:9} {n} call(s), {ok} valid  {q[:60]}', file=sys.stderr, flush=True)
    finally: gws.stop()
    print(f'\n{len(qs)} questions that need a tool, {spec.name}, greedy\n')
    print('| way | answers with a call | calls | valid calls | answers without a call | s per answer |\n|---|---|---|---|---|---|')
    for w, r in rows.items():
        print(f"| {w} | {r['with_calls']}/{r['answers']} | {r['calls']} | {r['valid']} | {r['none']} | {r['seconds'] / max(1, r['answers']):.1f} |")
    return 0

if __name__ == '__main__': sys.exit(main())
