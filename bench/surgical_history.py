"""How long `surgical_history` takes on 10,000 messages, next to the baselines of the same work.

Run: `python bench/surgical_history.py`. The target is <= 200 ms for 10,000 messages: surgical compaction runs in the
middle of a turn, with the user waiting, so it must cost little next to a model call.

The conversation is a realistic mix: turns of a user request, an assistant message with a tool call, the tool's result
(a third of the messages, from a few lines up to 6,000 characters of output) and a reply. Baselines: joining the
messages' text (the least any rendering does) and `serialise` (the other rendering of a history, for a summariser).
"""
import random, json, timeit
from ramabana.compaction import surgical_history, serialise, msg_text
from ramabana.core import format_table

def conversation(n=10_000, seed=0):
    "`n` messages in turns of request, tool call, result and reply."
    rnd, out, i = random.Random(seed), [], 0
    words = 'the exporter writes one module per notebook and the cell ids stay stable across runs'.split()
    say = lambda k: ' '.join(rnd.choice(words) for _ in range(k))
    while len(out) < n:
        out += [{'role': 'user', 'content': say(rnd.randint(5, 400))},
                {'role': 'assistant', 'content': say(rnd.randint(0, 60)),
                 'tool_calls': [{'id': f'c{i}', 'type': 'function', 'function': {
                     'name': 'run_python', 'arguments': json.dumps({'code': say(rnd.randint(3, 80))})}}]},
                {'role': 'tool', 'tool_call_id': f'c{i}', 'content': '\n'.join(say(8) for _ in range(rnd.randint(1, 110)))},
                {'role': 'assistant', 'content': say(rnd.randint(3, 200))}]
        i += 1
    return out[:n]

def best(f, number=3, repeat=5): return min(timeit.repeat(f, number=number, repeat=repeat)) / number

def main(n=10_000):
    msgs = conversation(n)
    chars = sum(len(msg_text(m)) for m in msgs)
    base = best(lambda: '\n'.join(msg_text(m) for m in msgs))
    rows = [('join the messages\' text (baseline)', base), ('serialise(msgs)', best(lambda: serialise(msgs))),
            ('surgical_history(msgs)', best(lambda: surgical_history(msgs)))]
    print(f'{n:,} messages, {chars:,} characters of text\n')
    print(format_table([(k, f'{t*1e3:.1f}', f'{t/base:.1f}x') for k, t in rows], ('case', 'ms', 'vs baseline')))
    t = rows[-1][1]
    ok = t <= 0.2
    print(f'\nsurgical_history of {n:,} messages: {t*1e3:.1f} ms  (target <= 200 ms: {"PASS" if ok else "FAIL"})')
    return ok

if __name__ == '__main__': raise SystemExit(0 if main() else 1)
