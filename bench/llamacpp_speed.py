"""SmolLM2 on the managed llama-server: prefill and decode speed, prompt-cache efficiency, memory.

Run: `python bench/llamacpp_speed.py` (first run: builds llama-bench from the same pinned sdist, several minutes;
then about two minutes). Prints four tables:

1. prefill (pp) and decode (tg) tok/s of `llama-bench` (same build flags, same threads, same prompt size) next to
   the same model behind the managed llama-server (best of 5 each: the 2 cores are shared with other work, and
   contention only ever slows a run down), measured three ways: the server's own `timings`, the wall clock
   of a client talking to the server directly, and the wall clock of a client going through the ramabana gateway.
   Goal: >= 0.95 of llama-bench through the gateway.
2. a 10-turn conversation: evaluated tokens (timings.prompt_n / the ledger's evaluated_tokens) over the tokens new
   since the previous turn. Goal <= 1.10.
3. server RSS after 50 requests of different conversations, with the default host prompt cache and with
   `server.cache_ram_mib = 0`.

llama-bench is built into `cache_dir()/bench/<pin>-<cpu-hash>/` with `ramabana.llamabuild`'s own build helpers; the
server is the one `ramabana setup` built. `--build-only` just builds llama-bench.
"""
import argparse, dataclasses, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path
import httpx
from ramabana import llamaserver as L, llamabuild as LB
from ramabana.core import BUILTIN_MODELS, cache_dir, engine_config, format_table

THREADS, PP, TG, REPS = 2, 512, 128, 5

def build_llama_bench() -> Path:
    "llama-bench from the pinned sdist, built once per pin and CPU into the cache."
    final = cache_dir()/'bench'/LB.build_dir().name
    def make(out):
        with tempfile.TemporaryDirectory(dir=final.parent) as work, open(final.parent/f'{final.name}.build.log', 'w') as lf:
            src = LB.fetch_sdist(Path(work))
            LB.cmake_build(src, Path(work)/'build', targets=('llama-bench',), log=lf)
            (out/'bin').mkdir()
            os.rename(Path(work)/'build'/'bin'/'llama-bench', out/'bin'/'llama-bench')
        return dict(pin=LB.PIN, cpu_flags=LB.cpu_flags_hash())
    final.parent.mkdir(parents=True, exist_ok=True)
    LB.cached_install(final, make)
    return final/'bin'/'llama-bench'

if __name__ == '__main__' and '--build-only' in sys.argv:
    print(build_llama_bench())
    sys.exit(0)

# --- 1. speed ---------------------------------------------------------------------------------------------------

def llama_bench(exe, model) -> dict:
    "llama-bench's prefill and decode tok/s (mean over REPS) for PP and TG tokens on THREADS threads."
    r = subprocess.run([exe, '-m', model, '-t', str(THREADS), '-p', str(PP), '-n', str(TG), '-r', str(REPS), '-o', 'json'],
                       capture_output=True, text=True, check=True)
    res = json.loads(r.stdout)
    return dict(pp=max(next(x['samples_ts'] for x in res if x['n_prompt'] and not x['n_gen'])),
                tg=max(next(x['samples_ts'] for x in res if x['n_gen'] and not x['n_prompt'])))

WORDS = ('river stone garden window market yellow quiet engine paper summer letter bridge forest silver number '
         'station morning island pencil doctor').split()

def prompt_text(server, n_tokens, nonce) -> str:
    "A user message whose chat prompt is about `n_tokens` tokens; `nonce` first, so no two share a cached prefix."
    import random
    rnd = random.Random(nonce)
    words = [f'{nonce}:'] + [rnd.choice(WORDS) for _ in range(n_tokens)]
    toks = httpx.post(f'{server}/tokenize', json={'content': ' '.join(words)}).json()['tokens']
    while len(toks) > n_tokens - 12:  # ~12 tokens of chat template around the message
        words = words[:-max(1, (len(toks) - n_tokens + 12))]
        toks = httpx.post(f'{server}/tokenize', json={'content': ' '.join(words)}).json()['tokens']
    return ' '.join(words)

def timed_stream(url, body, headers=None) -> dict:
    "Stream one chat completion from `url` (an OpenAI base URL); wall-clock prefill/decode rates and the server's timings."
    t0, first, last, n, usage, timings = time.perf_counter(), None, None, 0, None, None
    with httpx.stream('POST', f'{url}/chat/completions', json={**body, 'stream': True, 'stream_options': {'include_usage': True}},
                      headers=headers or {}, timeout=300) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith('data: ') or line == 'data: [DONE]': continue
            c = json.loads(line[6:])
            if c.get('choices') and (c['choices'][0].get('delta') or {}).get('content'):
                now = time.perf_counter()
                first = first or now; last = now; n += 1
            usage, timings = c.get('usage') or usage, c.get('timings') or timings
    return dict(ttft=first - t0, decode_s=last - first, n=n, usage=usage, timings=timings)

def speed(urls:dict, server) -> dict:
    "Prefill and decode rates through each of `urls` (name -> OpenAI base URL), interleaved so they share the conditions."
    res = {k: dict(pp_wall=[], pp_srv=[], tg_wall=[], tg_srv=[]) for k in urls}
    for i in range(REPS):
        for k, url in urls.items():
            nonce = f'{time.time_ns()}-{i}'
            r = timed_stream(url, dict(model='smollm2-bench', messages=[{'role': 'user', 'content': prompt_text(server, PP, nonce)}],
                                       max_tokens=1))
            evaluated = r['timings']['prompt_n'] if r['timings'] else r['usage']['prompt_tokens']  # the template's start may be cached
            res[k]['pp_wall'].append(evaluated / r['ttft'])  # ttft covers the prefill and the first token
            if r['timings']: res[k]['pp_srv'].append(r['timings']['prompt_per_second'])
            r = timed_stream(url, dict(model='smollm2-bench', messages=[{'role': 'user', 'content': f'{nonce} Count from 1 to 300, comma separated.'}],
                                       max_tokens=TG, ignore_eos=True, temperature=0))
            res[k]['tg_wall'].append((r['n'] - 1) / r['decode_s'])
            if r['timings']: res[k]['tg_srv'].append(r['timings']['predicted_per_second'])
    best = lambda xs: max(xs) if xs else None  # best of REPS: the cores are shared, and contention only ever slows down
    return {k: {m: best(xs) for m, xs in v.items()} for k, v in res.items()}

# --- 2. a 10-turn session ------------------------------------------------------------------------------------------

def session(url, turns=10) -> list[tuple]:
    "Per turn: (prompt tokens, tokens new since the last turn, of which the server wrote itself, evaluated)."
    import openai
    oai = openai.OpenAI(base_url=url, api_key='unused', max_retries=0, timeout=300)
    msgs = [{'role': 'system', 'content': f'{time.time_ns()} You are a helpful assistant who answers briefly. ' * 10}]
    rows, prev = [], None
    for i in range(turns):
        msgs.append({'role': 'user', 'content': f'Question {i + 1}: name a {WORDS[i]} and say one thing about it.'})
        r = oai.chat.completions.create(model='smollm2-bench', messages=msgs, max_tokens=24, seed=i)
        msgs.append({'role': 'assistant', 'content': r.choices[0].message.content})
        ev = (r.model_extra or {}).get('timings', {}).get('prompt_n')
        p = r.usage.prompt_tokens
        rows.append((p, p - prev[0] if prev else p, prev[1] if prev else 0, ev))
        prev = (p, r.usage.completion_tokens)
    return rows

# --- 3. memory --------------------------------------------------------------------------------------------------

def rss_mib(pid) -> float:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'): return int(line.split()[1]) / 1024

def rss_after(spec, n=50) -> tuple[float, float]:
    "Server RSS (MiB) when idle and after `n` requests of different conversations."
    url = L.server_url(spec, engine_config=engine_config())
    pid = L.running(spec).pid
    before = rss_mib(pid)
    for i in range(n):
        httpx.post(f'{url}/v1/chat/completions', timeout=300, json=dict(max_tokens=4, messages=[
            {'role': 'system', 'content': f'Conversation {i}. ' + ' '.join(WORDS[(i + j) % len(WORDS)] for j in range(200))},
            {'role': 'user', 'content': 'Hi.'}])).raise_for_status()
    after = rss_mib(pid)
    L.stop(spec)
    return before, after

# --- main -------------------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--skip-rss', action='store_true', help='leave out the memory table (it takes the longest)')
    a = ap.parse_args()
    from ramabana.gateway import Gateway
    from ramabana.app import GatewayServer
    from ramabana.ledger import Ledger
    engines = engine_config()   # the settings' threads and binary, for this process's server and the gateway's alike
    paths = L.setup(progress=False, spec=BUILTIN_MODELS['smollm2'], engine_config=engines)
    bench = build_llama_bench()
    spec = dataclasses.replace(BUILTIN_MODELS['smollm2'], name='smollm2-bench', threads=THREADS)
    lb = llama_bench(bench, paths['model'])
    server = L.server_url(spec, engine_config=engines)
    with tempfile.TemporaryDirectory() as d:
        gw = GatewayServer(Gateway(ledger=Ledger(Path(d)/'calls.db'), models={spec.name: spec}, engines=engines)).start()
        try:
            sp = speed(dict(direct=server + '/v1', gateway=gw.url), server)
            direct, via = sp['direct'], sp['gateway']
            turns = session(gw.url)
        finally: gw.stop()
    L.stop(spec)
    r = lambda x, base: f'{x:.1f} ({x / base:.2f})' if x else '-'
    print(f'\nSmolLM2-135M Q4_1, {THREADS} threads, prompt {PP} tokens, {TG} generated, best of {REPS}; '
          f'tok/s (ratio to llama-bench)\n')
    print(format_table([('llama-bench', f"{lb['pp']:.1f}", f"{lb['tg']:.1f}"),
                        ('server timings', r(direct['pp_srv'], lb['pp']), r(direct['tg_srv'], lb['tg'])),
                        ('server, client clock', r(direct['pp_wall'], lb['pp']), r(direct['tg_wall'], lb['tg'])),
                        ('gateway, server timings', r(via['pp_srv'], lb['pp']), r(via['tg_srv'], lb['tg'])),
                        ('gateway, client clock', r(via['pp_wall'], lb['pp']), r(via['tg_wall'], lb['tg']))],
                       ('path', 'prefill', 'decode')))
    print('\n10-turn session through the gateway (evaluated = timings.prompt_n)\n')
    rows = [(i + 1, p, new, own, ev, f'{ev / new:.2f}', f'{ev / (new - own):.2f}') for i, (p, new, own, ev) in enumerate(turns)]
    tot = lambda k: sum(t[k] for t in turns[1:])
    print(format_table(rows, ('turn', 'prompt', 'new', 'its own reply', 'evaluated', 'eval/new', 'eval/(new - own)')))
    print(f'turns 2-10: evaluated/new = {tot(3) / tot(1):.2f}; evaluated/(new - own reply) = {tot(3) / (tot(1) - tot(2)):.2f}; '
          f'whole session: evaluated/prompt growth = {sum(t[3] for t in turns) / turns[-1][0]:.2f}')
    if not a.skip_rss:
        print('\nserver RSS (MiB) idle and after 50 requests of different ~220-token conversations\n')
        rows = []
        for label, server_keys in (('default host cache (8192 MiB cap)', {}), ('server.cache_ram_mib = 0', {'cache_ram_mib': 0})):
            b, af = rss_after(dataclasses.replace(spec, name='smollm2-bench-rss', server=server_keys))
            rows.append((label, f'{b:.0f}', f'{af:.0f}'))
        print(format_table(rows, ('profile', 'idle', 'after 50')))

if __name__ == '__main__': main()
