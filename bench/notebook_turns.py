"""`%%ram` questions in a real kernel on a local model: what each question makes the server read, and how often an
answer loops.

Run: `python bench/notebook_turns.py [--model qwen2.5-coder-1.5b]` (needs `ramabana setup`; about five minutes on
SmolLM2, the model it runs without --model). Prints two tables; `--only restart` prints a third.

1. A 14-cell notebook whose code cells run in the kernel first (a look finds their variables), `%load_ext ramabana`,
   `%ram approve auto`, then five `%%ram` questions, each from a new cell saved into the
   notebook as JupyterLab would: three in a row with nothing else changed, one after a cell was edited, one after a
   cell was added. For each question, from the ledger: prompt tokens, tokens served from the server's cache,
   tokens the server read (evaluated), time to the first token, and the tokens new since the previous request
   (this prompt less the previous prompt and its answer). Two runs side by side: `before`, the whole notebook with
   every question (`Session.send_changes = False`: each earlier block becomes a note, as ramabana did until
   2026-12-01), and `after`, the notebook once and then only what changed. Goal: the second question starts
   answering in under 2 s; evaluated <= 1.2 x new.
2. 20 varied questions to SmolLM2 decoding greedily (temperature 0), for each repetition setting of the table: how
   many answers loop (the runtime's `LoopGuard` stops them) and how many still run to their 512-token limit. The
   setting the embedded model's profile ships is the row marked `*`. Goal: none at the limit.

4. `--only prefill`: the prompt of the warm-up `%load_ext` sends, read by llama-server in the kernel (through the
   in-process gateway) and by the same llama-server alone (this process posts the same body, the cache off), in
   turns; tokens/s of each read, and the CPU seconds the kernel process and the server spent during the kernel's read.

   `--only answers` runs the `after` questions alone and prints what the cell showed, and when: the first thing, the
   answer's own words (after the output of its last code action), the end; and whether the answer names the truth.

3. `--only restart`: the same notebook in a kernel that loads ramabana and is asked a question at once (it waits for
   the warm-up), then shuts down as Jupyter's restart does, and a second kernel that does the same; once with
   `llamacpp.saved_slots_mib = 0` (the server's slot is not saved) and once with slots saved. For each kernel: what its
   warm-up read and how long it took, and the seconds from `%load_ext` to the answer's words and to its end.

Every question decodes greedily, so a run is repeatable on one machine; another CPU may pick other kernels, and
other answers.
"""
import argparse, json, os, re, tempfile, time
from pathlib import Path
from ramabana import kernel

ROOT = Path(__file__).resolve().parent.parent

CELLS = [
    ('md', '# Monthly sales\nThe numbers come from the shop\'s export; March is missing from the file.'),
    ('code', 'import json, statistics\nraw = {"Jan": 120, "Feb": 95, "Apr": 130, "May": 160, "Jun": 150}', ''),
    ('code', 'months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"]\nnorth = [raw.get(m) for m in months]\nnorth',
     "[120, 95, None, 130, 160, 150]"),
    ('md', '## Cleaning\nMarch has no value; the plot shows a gap there.'),
    ('code', 'filled = [v if v is not None else 0 for v in north]\nfilled', '[120, 95, 0, 130, 160, 150]'),
    ('code', 'total = sum(filled)\nprint("total", total)', 'total 655\n'),
    ('code', 'mean = statistics.mean(v for v in north if v is not None)\nround(mean, 1)', '131.0'),
    ('code', 'best = max(zip(filled, months))\nbest', "(160, 'May')"),
    ('md', '## Growth\nMonth over month, skipping the gap.'),
    ('code', 'growth = [b - a for a, b in zip(filled, filled[1:])]\ngrowth', '[-25, -95, 130, 30, -10]'),
    ('code', 'for m, v in zip(months, filled):\n    print(f"{m}: {\'#\' * (v // 10)}")',
     'Jan: ############\nFeb: #########\nMar: \nApr: #############\nMay: ################\nJun: ###############\n'),
    ('code', 'report = {"total": total, "mean": round(mean, 1), "best": best[1]}\njson.dumps(report)',
     '\'{"total": 655, "mean": 131.0, "best": "May"}\''),
    ('md', '## Notes\nThe export for March should come next week.'),
    ('code', 'def share(m):\n    return filled[months.index(m)] / total\nround(share("May"), 3)', '0.244'),
]
QUESTIONS = ['Why does the plot have a gap in March?', 'What is the total?', 'Which month sold most?',
             'What does the edited cell compute now?', 'What does the new cell show?']
LOOP_QUESTIONS = ['What is 7 times 6?', 'Name three colours.', 'What is the capital of France?',
                  'Write a haiku about rain.', 'What does a Python list hold?', 'How many days are in a leap year?',
                  'Explain what a variable is.', 'What is the opposite of hot?', 'Give me a word that rhymes with cat.',
                  'What does CPU stand for?', 'Why is the sky blue?', 'Say hello in French.',
                  'What is 100 divided by 4?', 'Name a fruit that is yellow.', 'What is a prime number?',
                  'How do you sort a list in Python?', 'What is the boiling point of water?',
                  'Write one sentence about cats.', 'What comes after Tuesday?', 'What is JSON?']
SETTINGS = {'none': {}, 'repeat 1.1': {'repeat_penalty': 1.1},
            'dry 0.8': {'dry_multiplier': 0.8, 'dry_base': 1.75, 'dry_allowed_length': 2},
            'dry 0.8 + repeat 1.1': {'dry_multiplier': 0.8, 'dry_base': 1.75, 'dry_allowed_length': 2, 'repeat_penalty': 1.1}}

def cell(i, kind, src, out=''):
    c = {'id': f'c{i}', 'cell_type': 'markdown' if kind == 'md' else 'code', 'metadata': {}, 'source': src}
    if kind == 'code':
        c.update(execution_count=None, outputs=[{'output_type': 'stream', 'name': 'stdout', 'text': out}] if out else [])
    return c

def write_nb(path, cells):
    path.write_text(json.dumps({'cells': cells, 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}, indent=1))

class Kernel(kernel.Kernel):
    "A real ipykernel (`ramabana.kernel`'s), started at once; `run(code, cell_id)` executes a cell and waits until it is idle."
    def __init__(self, env, cwd):
        super().__init__(cwd, env, startup=90)
        self.start()
    def run(self, code, cell_id=None, timeout=600):
        ex = super().run(code, timeout, cell_id, grace=None)
        if ex.timed_out: raise TimeoutError(f'{code[:40]!r} did not finish in {timeout} s')
        self.last = ex
        return ex.messages

OUTPUT_END = re.compile(r'```(?:text)?\n.*?\n```\s*', re.S)   # a shown output block, closed

def seen_times(ex) -> dict:
    "What the cell showed and when (seconds from sending it): the first thing, the answer's own words, the end; and the answer."
    first = words = None
    shown = {}   # display id -> its text/plain as last shown, in order of first showing
    times = []   # (time, the answer's text so far): the cell's text after each display message
    for t, m in ex.msgs:
        if m['header']['msg_type'] not in ('display_data', 'update_display_data'): continue
        if (m['content'].get('metadata') or {}).get('ramabana') != 'answer': continue
        did = (m['content'].get('transient') or {}).get('display_id') or id(m)
        shown[did] = (m['content'].get('data') or {}).get('text/plain', '')
        if first is None and shown[did].strip(): first = t - ex.sent
        times.append((t - ex.sent, ''.join(shown.values())))
    answer = times[-1][1] if times else ''
    # the answer's own words begin after the last output block it shows (a code action's output), or at once
    start = max((m.end() for m in OUTPUT_END.finditer(answer)), default=0)
    head = answer[start:].strip()[:12]   # its first words, wherever the cell showed them first (inside a block too)
    words = next((t for t, text in times if head and head in text[start:]), None)
    return dict(first=first, words=words, end=(ex.idle or ex.msgs[-1][0]) - ex.sent if ex.msgs else None, answer=answer)

def config(tmp, model='smollm2', extra=''):
    "A config with `model` as the default, decoding greedily (the rest of its profile as shipped)."
    p = tmp/'config.toml'
    p.write_text(f'[model]\ndefault = "{model}"\n\n[model."{model}".sampling]\ntemperature = 0.0\n' + extra)   # the rest of its sampling as shipped
    return p

def turns(send_changes:bool, model:str='smollm2') -> list[dict]:
    "Five questions in a real kernel; the ledger rows of their turns."
    tmp = Path(tempfile.mkdtemp(prefix='nbturns-'))
    nb = tmp/'sales.ipynb'
    cells = [cell(i, *c) for i, c in enumerate(CELLS)]
    write_nb(nb, cells)
    env = {**os.environ, 'RAMABANA_CONFIG': str(config(tmp, model)), 'RAMABANA_DATA_DIR': str(tmp/'data'),
           'RAMABANA_TASK_DIR': str(tmp/'tasks'), 'JPY_SESSION_NAME': str(nb)}
    env.pop('RAMABANA_MODEL_DEFAULT', None)   # the config names the model
    env.pop('RAMABANA_SAVE_HOOK', None)
    k = Kernel(env, tmp)
    try:
        # the user ran the notebook: its variables are in the kernel, as the questions assume (a look finds them)
        for c in cells:
            if c['cell_type'] == 'code': k.run(c['source'], cell_id=c['id'])
        k.run('%load_ext ramabana')
        # %load_ext warms a local model (agent.warm); a user's first question comes after they wrote it
        k.run('import ramabana.magic as _m\nif _m.session().warming: _m.session().warming.join()')
        k.run('%ram approve auto')   # no one is there to approve run_python, as in bench/agent_tasks.py
        if not send_changes: k.run('import ramabana.magic as _m; _m.session().send_changes = False')
        for q, question in enumerate(QUESTIONS):
            if q == 3:
                cells[5]['source'] = 'total = sum(v for v in filled if v)\nprint("total without gaps", total)'
                k.run(cells[5]['source'], cell_id=cells[5]['id'])
            if q == 4:
                cells.insert(len(cells), cell(99, 'code', 'sorted(zip(filled, months))[:2]', "[(0, 'Mar'), (95, 'Feb')]"))
                k.run(cells[-1]['source'], cell_id=cells[-1]['id'])
            cells.append(cell(100 + q, 'code', f'%%ram\n{question}'))   # the asking cell, saved as JupyterLab would
            write_nb(nb, cells)
            k.run(f'%%ram\n{question}', cell_id=f'c{100 + q}')
            SEEN.append(seen_times(k.last))
    finally: k.shutdown(now=True)
    return ledger_turns(tmp/'data'/'ledger.sqlite')

SEEN: list[dict] = []   # what each question of the last `turns` showed, and when (`seen_times`)
RIGHT = [r'Mar', r'655', r'May', r'655', r'(?s)(?=.*\bMar)(?=.*\b(?:low|least|small|fewest|worst))']   # a right answer to each of QUESTIONS matches (the notebook's truth)

def seen_table(seen:list) -> str:
    "Per question of `turns`: seconds to the first thing shown, to the answer's own words, to the end, and whether it is right."
    from ramabana.core import format_table
    f = lambda x: '-' if x is None else f'{x:.1f}'
    rows = [[f'{i + 1}. {q[:32]}', f(s['first']), f(s['words']), f(s['end']), 'yes' if re.search(r, s['answer']) else 'no']
            for i, (q, s, r) in enumerate(zip(QUESTIONS, seen, RIGHT))]
    return format_table(rows, ['question', 'first shown s', 'answer words s', 'end s', 'right'])

def restart(saved_mib:int, model:str='smollm2') -> list[dict]:
    "Two kernels on one notebook, the second started after the first shut down as Jupyter's restart does: the ledger rows of their warm-ups and questions."
    from ramabana import llamaserver
    tmp = Path(tempfile.mkdtemp(prefix='nbrestart-'))
    nb = tmp/'sales.ipynb'
    cells = [cell(i, *c) for i, c in enumerate(CELLS)]
    write_nb(nb, cells)
    env = {**os.environ, 'RAMABANA_CONFIG': str(config(tmp, model, f'\n[llamacpp]\nsaved_slots_mib = {saved_mib}\n')),
           'RAMABANA_DATA_DIR': str(tmp/'data'), 'RAMABANA_TASK_DIR': str(tmp/'tasks'), 'JPY_SESSION_NAME': str(nb)}
    env.pop('RAMABANA_MODEL_DEFAULT', None); env.pop('RAMABANA_SAVE_HOOK', None)
    for d in llamaserver.slots_root().glob(f'{model}-*'):   # an earlier run's saved slots would make the first kernel warm too
        for f in d.iterdir(): f.unlink()
    for q, question in enumerate(QUESTIONS[1:3]):
        k = Kernel(env, tmp)
        try:
            cells.append(cell(100 + q, 'code', f'%%ram\n{question}')); write_nb(nb, cells)
            loaded, wall = time.monotonic(), time.time()
            k.run('%load_ext ramabana')
            k.run(f'%%ram\n{question}', cell_id=f'c{100 + q}')   # at once: a question before the warm-up waits for it
            SEEN.append(dict(seen_times(k.last), since_load=k.last.sent - loaded, wall=wall))
        finally: k.shutdown(now=False)   # as Jupyter's restart does: a shutdown request, its exit handlers run
    return ledger_turns(tmp/'data'/'ledger.sqlite', purpose=None)

DUMP_WARM_BODY = """
import json, ramabana.magic as _m
_be = _m.session().get_agent().backend
_body, _extra = _be.request_body(_be._messages(hist=[{'role': 'user', 'content': _m.session().ahead()}]), 'warmup', 1, True, False, None)
open(%r, 'w').write(json.dumps({**_body, **(_extra or {})}))
"""

def cpu_seconds(p) -> float:
    "User and system CPU seconds of psutil process `p` so far (0 when it is gone)."
    import psutil
    try: t = p.cpu_times(); return t.user + t.system
    except psutil.Error: return 0.0

def prefill(model:str="qwen2.5-coder-1.5b", rounds:int=3) -> list[list]:
    "Per round: the warm-up's prompt read in a kernel and the same body read by the server alone: tokens, tokens/s, CPU s."
    import httpx, psutil
    from ramabana import llamaserver
    from ramabana.core import engine_config, resolve
    rows = []
    for r in range(rounds):
        tmp = Path(tempfile.mkdtemp(prefix='nbprefill-'))
        nb = tmp/'sales.ipynb'
        cells = [cell(i, *c) for i, c in enumerate(CELLS)]
        write_nb(nb, cells)
        env = {**os.environ, 'RAMABANA_CONFIG': str(config(tmp, model, '\n[llamacpp]\nsaved_slots_mib = 0\n')),
               'RAMABANA_DATA_DIR': str(tmp/'data'), 'RAMABANA_TASK_DIR': str(tmp/'tasks'), 'JPY_SESSION_NAME': str(nb)}
        env.pop('RAMABANA_MODEL_DEFAULT', None); env.pop('RAMABANA_SAVE_HOOK', None)
        k = Kernel(env, tmp)
        try:
            for c in cells:
                if c['cell_type'] == 'code': k.run(c['source'], cell_id=c['id'])
            k.run('import os; os.environ["RAMABANA_AGENT_WARM"] = "false"\n%load_ext ramabana')   # the warm-up is started below, measured
            k.run('import ramabana.magic as _m, ramabana.llamaserver as _ls, ramabana.core as _c; _be = _m.session().get_agent().backend; '
                  '_ls.server_url(_be.spec, engine_config=_c.engine_config())\n'
                  f'open({str(tmp/"server.pid")!r}, "w").write(str(_ls.running(_be.spec).pid))')   # the server up, nothing read yet
            procs = {'kernel': psutil.Process(k.pid), 'server': psutil.Process(int((tmp/'server.pid').read_text()))}
            before = {n: cpu_seconds(p) for n, p in procs.items()}
            k.run('os.environ["RAMABANA_AGENT_WARM"] = "true"; _m.session().warm().join()')
            spent = {n: cpu_seconds(p) - before[n] for n, p in procs.items()}
            k.run(DUMP_WARM_BODY % str(tmp/'warm.json'))
        finally: k.shutdown(now=False)
        w = ledger_turns(tmp/'data'/'ledger.sqlite', purpose=None)[0]
        kernel_tps = w['evaluated_tokens'] / (w['prefill_ms'] / 1000)
        body = {**json.loads((tmp/'warm.json').read_text()), 'stream': False, 'cache_prompt': False, 'max_tokens': 1, 'model': model}
        for k in ('stream_options', 'reasoning_budget_tokens'): body.pop(k, None)   # the gateway's own fields: the server needs neither
        url = llamaserver.server_url(resolve(model), engine_config=engine_config())
        try: t = httpx.post(url + '/v1/chat/completions', json=body, timeout=600).json()['timings']
        finally: llamaserver.stop_all()
        rows.append([f'round {r + 1}', f"{w['evaluated_tokens']:,}", f'{kernel_tps:.1f}', f"{t['prompt_n']:,}",
                     f"{t['prompt_per_second']:.1f}", f"{kernel_tps / t['prompt_per_second']:.2f}",
                     f"{spent['kernel']:.1f}", f"{spent['server']:.1f}", f"{w['prefill_ms'] / 1000:.1f}"])
    return rows

def restart_table(off:list, on:list, seen:list) -> str:
    "Per kernel (`seen`, in order): what its calls read (the warm-up's and the question's), and the seconds from `%load_ext` to the answer's words and end."
    import datetime as dt
    from ramabana.core import format_table
    out = []
    for name, rows in (('saving off', off), ('saving on', on)):
        ks = [seen.pop(0), seen.pop(0)]
        at = lambda r: dt.datetime.fromisoformat(r['time']).timestamp()
        for i, s in enumerate(ks):
            mine = [r for r in rows if s['wall'] <= at(r) < (ks[i + 1]['wall'] if i + 1 < len(ks) else float('inf'))]
            w = next((r for r in mine if r['purpose'] == 'warmup'), None)
            out.append([name, f'kernel {i + 1}', f"{w['prompt_tokens']:,}" if w else '-', f"{w['cached_tokens'] or 0:,}" if w else '-',
                        f"{sum(r['evaluated_tokens'] or 0 for r in mine):,}", f"{s['since_load'] + s['words']:.1f}",
                        f"{s['since_load'] + s['end']:.1f}"])
    return format_table(out, ['', '', 'warm-up prompt', 'cached', 'read in all', 'answer words s', 'end s'])

def by_question(rows:list) -> list[list]:
    "The ledger rows of each question: its steps, up to and including the answer (a step that did not end in tool calls)."
    out, cur = [], []
    for r in rows:
        cur.append(r)
        if r['finish_reason'] != 'tool_calls': out.append(cur); cur = []
    return out + ([cur] if cur else [])

def turn_table(before, after) -> str:
    "Per question: the first step's prompt, cached and read tokens, the tokens new since the last answer, the time to the first thing shown (a tool call, or the answer) and to the answer's first token."
    from ramabana.core import format_table
    def new_tokens(qs, i):
        if i == 0: return qs[0][0]['prompt_tokens']
        p = qs[i - 1][-1]
        return qs[i][0]['prompt_tokens'] - (p['prompt_tokens'] or 0) - (p['completion_tokens'] or 0)
    answer_s = lambda steps: (sum(r['total_ms'] for r in steps[:-1]) + steps[-1]['ttft_ms']) / 1000   # tools run in ms
    out, qb, qa = [], by_question(before), by_question(after)
    for i, q in enumerate(QUESTIONS):
        row = [f'{i + 1}. {q[:32]}']
        for qs in (qb, qa):
            if i >= len(qs): row += ['-'] * 7; continue
            r = qs[i][0]
            row += [f"{r['prompt_tokens']:,}", f"{r['cached_tokens'] or 0:,}", f"{r['evaluated_tokens'] or 0:,}",
                    f'{new_tokens(qs, i):,}', str(len(qs[i])), f"{r['ttft_ms'] / 1000:.2f}", f'{answer_s(qs[i]):.2f}']
        out.append(row)
    head = ['question'] + [f'{w} {h}' for w in ('before', 'after')
                           for h in ('prompt', 'cached', 'read', 'new', 'steps', 'first shown s', 'answer s')]
    return format_table(out, head)

def ledger_turns(path, purpose='turn') -> list[dict]:
    "The rows of a ledger file with `purpose` (None: all), oldest first."
    from ramabana.ledger import Ledger
    led = Ledger(path)
    try: return list(reversed(led.recent(200, **({'purpose': purpose} if purpose else {}))))
    finally: led.close()

REPETITION = ('repeat_penalty', 'dry_multiplier', 'dry_base', 'dry_allowed_length', 'dry_penalty_last_n')

def loops(setting:dict) -> tuple[int, int]:
    "(answers the loop guard stopped, answers at their token limit) for the loop questions, greedy, with `setting`."
    import dataclasses
    from ramabana.backend import make_backend
    from ramabana.core import resolve
    spec = resolve('smollm2')
    base = {k: v for k, v in spec.sampling.items() if k not in REPETITION}
    be = make_backend(dataclasses.replace(spec, sampling={**base, 'temperature': 0.0, **setting}))
    looped = capped = 0
    try:
        for q in LOOP_QUESTIONS:
            be.resume_hist([])   # each question on its own
            be.send(q)
            looped += be._finish == 'loop'
            capped += be._finish == 'length'
    finally: be.close()
    return looped, capped

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--only', choices=('turns', 'answers', 'loops', 'restart', 'prefill'))
    ap.add_argument('--model', default='smollm2', help='the model of the turns table (the loops table is SmolLM2\'s)')
    ap.add_argument('--ledgers', nargs=2, metavar=('BEFORE', 'AFTER'), help="print the turns table from two earlier runs' ledger.sqlite")
    a = ap.parse_args()
    if a.ledgers: print(turn_table(*map(ledger_turns, a.ledgers))); return
    from ramabana import llamaserver
    from ramabana.core import engine_config, resolve
    llamaserver.setup(progress=True, spec=resolve(a.model), engine_config=engine_config())
    if a.only == 'answers':
        turns(True, a.model)
        print(f'1b. five %%ram questions on a 14-cell notebook ({a.model}, greedy, after the %load_ext warm-up), as the cell '
              'showed them: the first thing shown, the answer\'s own words (after the last output a code action showed), the '
              'end, and whether the answer names the truth\n')
        print(seen_table(SEEN)); return
    if a.only == 'prefill':
        from ramabana.core import format_table
        print(f'4. the warm-up prompt of the 14-cell notebook ({a.model}), read in a kernel and by the server alone\n')
        print(format_table(prefill(a.model), ['', 'kernel: read', 'tok/s', 'alone: read', 'tok/s', 'kernel/alone',
                                              'kernel CPU s', 'server CPU s', 'read s']))
        return
    if a.only == 'restart':
        print(f'3. a kernel restart on the 14-cell notebook ({a.model}, greedy): each kernel warms up, then one question\n')
        off, on = restart(0, a.model), restart(2048, a.model)
        print(restart_table(off, on, list(SEEN)))
        return
    if a.only != 'loops':
        before, after = turns(False, a.model), turns(True, a.model)
        print(f'1. five %%ram questions on a 14-cell notebook ({a.model}, greedy, after the %load_ext warm-up; tokens from '
              'the ledger; new = this prompt less the previous question\'s last prompt and answer; first shown = the first '
              'step\'s first token, a tool call or the answer; answer = the answer\'s first token)\n')
        print(turn_table(before, after))
        print('\n1b. the same questions (after) as the cell showed them: the first thing shown, the answer\'s own words (after '
              'the last output a code action showed), the end, and whether the answer names the truth\n')
        print(seen_table(SEEN[len(QUESTIONS):]))
        print()
    if a.only != 'turns':
        from ramabana.core import format_table, BUILTIN_MODELS
        shipped = {k: v for k, v in BUILTIN_MODELS['smollm2'].sampling.items() if k in REPETITION}
        rows = []
        for name, setting in SETTINGS.items():
            looped, capped = loops(setting)
            n = len(LOOP_QUESTIONS)
            rows.append([name + (' *' if setting == shipped else ''), f'{looped}/{n}', f'{capped}/{n}'])
        print('2. 20 questions, greedy: answers the loop guard stopped, and answers at the 512-token limit\n')
        print(format_table(rows, ['repetition setting', 'looped', 'at the limit']))

if __name__ == '__main__': main()
