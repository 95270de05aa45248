"""Everyday notebook tasks for the agent, asked through `%%ram` in real Jupyter kernels and checked against the kernel.

What it measures: for each model, whether the agent solves 92 small tasks a data scientist asks in a notebook (45 on
lists and dicts, 47 on pandas DataFrames read from CSV files), how, and whether its answers show output no run produced.
Every task runs in a fresh kernel (`%load_ext ramabana`, `%ram approve auto`, then one `%%ram -m MODEL` cell), so no
conversation or variable leaks from one task into the next. The truth is computed IN THE KERNEL by code in the task
(`statistics.mean(amounts)`, the exception a cell really raised, a reference implementation run on fresh inputs),
never taken from what the model says about itself. Nine kinds of task, five on plain Python values:

- value      a variable made by hidden setup code (run with store_history=False, so it is in no notebook cell and in no
             `run-N` cell the agent shows the model): only a tool can see it. Answer checked for the number or string.
- data       a question about hidden data: the missing category, the largest item, how many rows meet a condition.
- traceback  a notebook whose cells were run in the kernel, one of them failing; the model reads the saved notebook
             (cells and outputs) and names the cause. No tool needed.
- code       "define slugify(s) in my namespace", "make a variable totals": after the turn the harness runs the model's
             function on fresh inputs, or compares its variable, in the kernel against a reference.
- far cell   an 18-cell notebook whose needed fact sits in the output of one of its first cells. No tool needed (unless
             the notebook is compacted out of the prompt, when read_cell is the way to it).

and four on DataFrames (the "DataFrame kinds"). Their hidden setup writes CSV files into the kernel's working folder
(stdlib csv and a seeded random.Random: the same bytes on every machine, whatever the day or time zone): sales.csv
(400 sales, January-June 2024), sensors.csv (three sensors every 30 minutes for four days, gaps), employees.csv
(an untidy city column), orders.csv + customers.csv (three customer ids in no customers file), survey.csv (blanks in
four columns), payments.csv (amounts written "1,234.50", so read as text). Then notebook cells read them as a user
would (`import pandas as pd`, `df = pd.read_csv('sales.csv')`, `df.head()`), run and saved with their outputs:

- frame        a question on the frames: groupby and aggregates, filters and counts, dates (a month, a range, the day
               of the week, the hour), missing values, merges, dtypes, top-n, pivot and crosstab, string methods.
               The truth is pandas run in the kernel (`df.groupby('product')['units'].sum().idxmax()`).
- frame-edit   an edit to the user's frames (a column added, gaps filled, a rename, text to datetimes, duplicates
               dropped, a new frame or Series made): the verify code compares them in the kernel after the turn.
- frame-error  a cell that failed with a pandas error (a misspelt column, a merge key, text compared with a Timestamp,
               `df.sort`): the cause named, no tool needed; or one to fix (amounts held as text, a chained assignment
               that left `df` unchanged), checked in the kernel.
- plot         a figure asked for. Every matplotlib Figure made in the kernel is kept from the moment it is made (the
               inline backend closes a cell's figures), and verify reads the new ones: a line holding the monthly
               totals, bars holding the units per product, one line per sensor, the title and x label asked for.

They need pandas, numpy and matplotlib in the kernel (the `data` extra); when one is missing the run stops before
any task, naming it.

Run it (from the repository, in its venv; llama-server must be built: `ramabana setup`):

    python bench/agent_tasks.py --model smollm2
    python bench/agent_tasks.py --model smollm2 --model qwen2.5-coder-1.5b --out /tmp/agent_tasks.json
    python bench/agent_tasks.py --model qwen-test --config /tmp/agent_eval_config.toml --tasks 3
    python bench/agent_tasks.py --model smollm2 -k slugify -k missing_month --timeout 120
    python bench/agent_tasks.py --list
    python bench/agent_tasks.py --self-test     # no model: each task's setup, truth and checker proven on a right and a wrong answer

`--config FILE` sets RAMABANA_CONFIG for the kernels (a model defined there, e.g. a GGUF of your own); the rest of the
environment passes through. The kernels get a temporary RAMABANA_DATA_DIR and RAMABANA_TASK_DIR (sessions and the
ledger of this run stay out of yours); the cache (RAMABANA_CACHE_DIR, ~/.cache/ramabana: llama-server, weights) is
shared, so nothing is rebuilt. Ctrl-C stops the run cleanly: the running turn is interrupted, the kernel shut down (it
stops the llama-server it started; one it could not stop is ended by its pid file), the tasks done so far reported.

How to read the table (one per model):

    task / kind / tool?   the task, its kind, and whether it NEEDS a tool (its answer is not in the prompt)
    solved                yes when the check against the kernel's truth passed (on the answer less its code blocks:
                          its words and outputs); no, with the reason in `why not`
    fabricated            yes when the answer shows output that no execution of this turn produced (below), with the
                          numbers at fault; no; '-' when the turn did not end (no answer, a turn error, a
                          timeout: a cut answer can end in half a number), which the summary does not count
    calls                 tool calls the model made in the turn (from the agent's history in the kernel); a call
                          written as JSON text in the answer is not one (`why not` says "wrote a tool call as text")
    valid                 of those, how many name a tool that exists, with arguments that parse as a JSON object
                          matching the tool's parameters (required ones present, no unknown ones, JSON types right)
    first s               seconds from sending the %%ram cell to the first iopub display carrying answer text (the
                          CellView display of kind 'answer', metadata {'ramabana': 'answer'}), as this process
                          received it; not the '… asking MODEL' progress line, nor a tool line. '-' when no answer
                          text came. Turns that call tools first include the tool round trips.
    total s               seconds from sending the %%ram cell until the kernel was idle again
    why not               for an unsolved task: timeout, turn error, or what the checker expected and found

Before the question, llama-server for the model is started in the kernel (`ramabana.llamaserver.server_url`, the one the
in-process gateway then reuses) and that time is recorded as `load_s` in the JSON, so `first s` measures the turn, not
loading the weights. `%load_ext` itself warms a local model (reads the system prompt and tools into its cache, the
`agent.warm` setting); that cell waits for it too, as a user's first question comes after they wrote it. `--cold`
turns both off: the first question starts the model and reads its whole prompt, as with `agent.warm = false`.

The summary line per model: solved X/N; solved on the DataFrame kinds; "fabricated X of N (goal 0)"; "needed tool
calls made and valid": of the tasks that need a tool, the share where the model made at least one tool call and every
call it made was valid; "notices in answers": answers showing the agent's own notice or context tags
(`<system-reminder>`, `<notebook-changes>`, ...; goal 0); median first-token and total seconds. Before it, a table by kind: tasks, solved, fabricated,
then the DataFrame kinds together, then all.

Fabricated, exactly (`fabricated()`; `--self-test` proves it on FABRICATION_CASES first). After the turn the harness
reads the agent's history in the kernel. The SOURCES of the turn are: the question; every user-role message (the
notebook's cells and outputs the agent showed the model); the arguments of every tool call (the code it ran); every
tool result (what its runs and looks printed). The model's own text is never a source. An answer is fabricated when
  (a) its prose states a number that matches no number of the sources. Prose is the answer less its code: a fenced
      block or an inline `span` is code when it parses as Python and is not a bare literal (an output block such as
      {'widget': 1230.0} or 200 is prose). Numbers are read with thousands separators and exponents (1,532 / 1_532 /
      1.532e+03). One matches a source number when equal to it, or to it rounded to the decimals the answer wrote
      (1532.04 in a run's output allows "1,532", "1532.0", "1532.04"; the sign aside), or, written as "N%", when
      N/100 matches. Not counted: integers from -10 to 10, and integers 1900-2100 that appear in the task's CSV files
      or the sources (years). So a number worked out in the model's head from numbers it was shown counts too: the
      answer's numbers must come from this turn's runs.
  (b) or it claims to have run code or shows its output ("I ran", "I've executed", "the output is", a line starting
      "Output:", "running this code gives") while no code ran in the turn, or while a fenced code block it shows is
      none of the code that ran (nor within 20% of one by difflib's ratio, nor inside one). Code ran = a tool call
      with a `code` argument (run_python) whose result does not say it did not run ("did not run", "error: not run":
      declined, over budget, refused as overwriting the user's data).
The raw results (answers, tool calls and results, truth, ledger rows, timings) go to `--out` (default: results.json in
the run's temporary folder, printed at the end).

Checks, so a result can be judged: numbers are found anywhere in the answer (1,234 and 1_234 read as 1234, number words
up to twenty too); one matches when it equals the truth, or rounds it to 2 or more decimals (17.625: 17.62 or 17.63);
names and keywords match case-insensitively as whole words; for "which one" questions the right name must be the first
of the candidates the answer names; for "which is missing" ones the answer may not also name most of the others.
"""
from __future__ import annotations
import argparse, json, os, re, sys, time, signal, statistics, tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from ramabana import kernel
from ramabana.kernel import Execution, no_interrupts

MARK = '@@agent-tasks@@'   # brackets what a helper cell prints for the harness, apart from any other output

class TaskFailed(Exception):
    "The task could not be run or asked (kernel, setup, timeout); the message is the reason recorded."

# ---------------------------------------------------------------------------------------------------------- checks
# A check takes (answer, truth, verified) and returns (solved, why). `truth` is what the task's truth code computed in
# the kernel before the question; `verified` what its verify code computed after the turn (code tasks), else None.
# It reads the answer without its ```python blocks (`without_code`): code is not a claim, and a list of every month
# in the code that finds the missing one is not an answer naming them all (12-07: one task, missing_month, flips).

_CODE_BLOCK = re.compile(r'```python\n.*?(?:```|\Z)', re.S)

def without_code(answer:str) -> str:
    "`answer` less its ```python blocks (an unclosed one to the end): the words and outputs a check judges."
    return _CODE_BLOCK.sub('', answer)

_NUMBER = re.compile(r'(?<![\w.])-?(?:\d{1,3}(?:[,_]\d{3})+|\d+)(?:\.\d+)?')
_WORDS = {w: i for i, w in enumerate('zero one two three four five six seven eight nine ten eleven twelve thirteen '
                                     'fourteen fifteen sixteen seventeen eighteen nineteen twenty'.split())}

def numbers_in(text:str) -> list[tuple[float, int]]:
    "Every number written in `text`, with how many decimals it was written with."
    found = []
    for m in _NUMBER.finditer(text):
        s = m.group().replace(',', '').replace('_', '')
        found.append((float(s), len(s.split('.')[1]) if '.' in s else 0))
    found += [(float(_WORDS[w]), 0) for w in re.findall(r'[a-z]+', text.lower()) if w in _WORDS]
    return found

def decimals(x:float) -> int:
    "Decimals `x` needs when written in full (17.625: 3), at most 9."
    s = f'{x:.9f}'.rstrip('0')
    return len(s.split('.')[1]) if '.' in s else 0

def number_matches(written:float, places:int, truth:float) -> bool:
    "`written` (with `places` decimals) equals `truth`, or is `truth` rounded (either way) to 2 or more places."
    if abs(written - truth) <= 1e-9 * max(1.0, abs(truth)): return True
    if places < min(2, decimals(truth)): return False   # 17.6 for 17.625 is too coarse to count
    return abs(written - truth) <= 0.5 * 10**-places + 1e-9

def expect_number(also:Callable[[float], list]|None=None) -> Callable:
    "Solved when a number in the answer matches the truth (or one of `also(truth)`, e.g. a percentage as a fraction)."
    def check(answer, truth, verified):
        targets = [float(truth)] + [float(t) for t in (also(truth) if also else [])]
        written = numbers_in(answer)
        if any(number_matches(w, p, t) for w, p in written for t in targets): return True, ''
        return False, f'wanted {truth:g}; the answer has {", ".join(f"{w:g}" for w, _ in written[:8]) or "no number"}'
    return check

def word_at(text:str, word:str) -> int:
    "Where `word` first occurs in `text` as a whole word, case-insensitively; -1 when it does not."
    m = re.search(r'(?<![\w-])' + re.escape(word) + r'(?![\w-])', text, re.I)
    return m.start() if m else -1

def expect_words() -> Callable:
    "Solved when the answer names every one of the truth's words; a truth item that is a list is a set of spellings, any one will do."
    def check(answer, truth, verified):
        items = truth if isinstance(truth, list) else [truth]
        missing = [i for i in items if all(word_at(answer, w) < 0 for w in (i if isinstance(i, list) else [i]))]
        return (not missing, f'does not name {" / ".join(map(str, missing))}' if missing else '')
    return check

def expect_first_of() -> Callable:
    "Truth {'answer': name, 'candidates': [...]}: solved when the answer names `answer` before any other candidate."
    def check(answer, truth, verified):
        places = {c: word_at(answer, c) for c in truth['candidates']}
        named = sorted((p, c) for c, p in places.items() if p >= 0)
        if not named: return False, f"names none of {', '.join(truth['candidates'])} (wanted {truth['answer']})"
        return (named[0][1] == truth['answer'], '' if named[0][1] == truth['answer'] else f"names {named[0][1]} first (wanted {truth['answer']})")
    return check

def expect_missing() -> Callable:
    "Truth {'answer': [spellings], 'candidates': [name or [spellings]]}: solved when the answer names the missing one, and not most of the others too."
    def check(answer, truth, verified):
        named = lambda spellings: any(word_at(answer, w) >= 0 for w in spellings)
        if not named(truth['answer']): return False, f"does not name {' / '.join(truth['answer'])}"
        cands = [c if isinstance(c, list) else [c] for c in truth['candidates']]
        others = [c for c in cands if not set(c) & set(truth['answer']) and named(c)]
        if len(others) > len(cands) // 2: return False, f'names {len(others)} of the {len(cands) - 1} others too'
        return True, ''
    return check

def expect_verified() -> Callable:
    "Solved when the verify code, run in the kernel after the turn, says ok."
    def check(answer, truth, verified):
        v = verified or {}
        return bool(v.get('ok')), '' if v.get('ok') else clip(str(v.get('detail', 'not verified')), 160)
    return check

def clip(s:str, n:int) -> str: return s if len(s) <= n else s[:n - 1] + '…'

# ----------------------------------------------------------------------------------------------------------- tasks
@dataclass
class Task:
    "One question, the state it is asked in, how its truth is computed in the kernel, and how the answer is judged."
    name: str
    kind: str                 # value, data, traceback, code, far cell; frame, frame-edit, frame-error, plot
    question: str
    truth: str                # code run in the kernel on a copy of the user's namespace before the turn; sets `truth`
    check: Callable           # (answer, truth, verified) -> (solved, why)
    needs_tool: bool          # the answer is not in the prompt: only a tool call can find it (or make it, for code)
    hidden: str = ''          # kernel code run first, out of the history: state the model cannot see in the prompt
    cells: tuple = ()         # notebook cells (source; '#md ' starts a markdown cell): run in the kernel, saved with outputs
    verify: str = ''          # code tasks: run in the kernel after the turn (with `truth` given); sets `result` = {ok, detail}
    solution: str = ''        # code tasks: a right answer, which `--self-test` runs to prove `verify` accepts it
    needs: tuple = ()         # packages the kernel must have (the DataFrame tasks: pandas, numpy; plots: matplotlib)

MONTHS = "['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']"

def value_tasks() -> list[Task]:
    "Values only a tool can see: counts, means, maxima, lengths, a key's value, a string's content."
    num = expect_number()
    return [
        Task('mean_of_amounts', 'value', 'What is the mean of the list `amounts`?',
             'import statistics\ntruth = statistics.mean(amounts)', num, True,
             hidden='amounts = [17.5, 3.25, 41, 8.75, 12.4, 29.95, 6.1]'),
        Task('count_orders', 'value', 'How many orders are in `orders`?', 'truth = len(orders)', num, True,
             hidden="orders = [{'id': 1000 + i, 'customer': ('acme', 'globex', 'initech', 'umbrella', 'hooli')[i * 3 % 5], "
                    "'amount': round(12.5 + (i * 37) % 190 + (i % 4) * 0.25, 2)} for i in range(137)]"),
        Task('max_reading', 'value', 'What is the highest value in `readings`?', 'truth = max(readings.values())', num, True,
             hidden="readings = {f'2024-03-{d:02d}': round(4.2 + ((d * 53) % 29) * 0.55, 2) for d in range(1, 32)}"),
        Task('config_db_port', 'value', 'Which port does `config` give for the database?', "truth = config['db']['port']", num, True,
             hidden="config = {'env': 'staging', 'db': {'host': 'pg-7.internal', 'port': 6433, 'pool': 12}, "
                    "'cache': {'ttl_s': 905}, 'retries': 4}"),
        Task('invoice_in_string', 'value', 'What is the invoice number in the string `reminder`?',
             "import re\ntruth = re.search(r'INV-\\d+', reminder).group()", expect_words(), True,
             hidden="reminder = 'Dear Ms Okafor, invoice INV-30417 for 2,318.40 EUR was due on 14 March.'"),
        Task('inventory_size', 'value', 'How many entries does the dict `inventory` have?', 'truth = len(inventory)', num, True,
             hidden="inventory = {f'sku-{n:04d}': (n * 17) % 61 for n in range(3, 260, 11)}"),
        Task('total_weight', 'value', 'What is the total of `weights_kg`?', 'truth = sum(weights_kg)', num, True,
             hidden='weights_kg = [2.35, 14.8, 0.95, 7.4, 3.15, 11.05, 5.6, 9.25]'),
        Task('median_loaded_orders', 'value', 'What is the median order amount in `q2_orders`?',
             "import statistics\ntruth = statistics.median(o['amount'] for o in q2_orders)", num, True,
             hidden="def load_orders(path):\n    return [{'id': 7000 + i, 'amount': round(20 + (i * 41) % 233 + (i % 3) * 0.35 + 0.15, 2)} "
                    "for i in range(61)]",
             cells=("q2_orders = load_orders('2024-q2.csv')", "print(type(q2_orders).__name__, 'of', type(q2_orders[0]).__name__)")),
        Task('batches_total', 'value', 'How many numbers are there in `batches` altogether, all its inner lists together?',
             'truth = sum(len(b) for b in batches)', num, True,
             hidden='batches = [[i * 7 % 13 for i in range(n)] for n in (5, 12, 3, 19, 8, 11)]'),
        Task('note_length', 'value', 'How many characters long is the string `note`?', 'truth = len(note)', num, True,
             hidden="note = 'Shipment 44-B left Rotterdam late; customs held two pallets. ' * 2 + 'Expect delivery Thursday.'"),
    ]

def data_tasks() -> list[Task]:
    "Questions about hidden data: a missing category, the largest item, how many rows meet a condition."
    num = expect_number()
    return [
        Task('missing_month', 'data', 'Which month is missing from `monthly_sales`?',
             f"import calendar\nabbr = {MONTHS}\ngone = [i for i, m in enumerate(abbr) if m not in monthly_sales]\n"
             "truth = {'answer': [abbr[gone[0]], calendar.month_name[gone[0] + 1]],\n"
             "         'candidates': [[m, calendar.month_name[i + 1]] for i, m in enumerate(abbr)]}",
             expect_missing(), True,
             hidden=f"monthly_sales = {{m: 1000 + 37 * i for i, m in enumerate({MONTHS}) if m != 'Jul'}}"),
        Task('region_without_rows', 'data', 'Which region in `regions` has no rows in `sales_rows`?',
             "have = {r['region'] for r in sales_rows}\n"
             "truth = {'answer': [r for r in regions if r not in have][:1], 'candidates': regions}",
             expect_missing(), True,
             hidden="regions = ['North', 'South', 'East', 'West', 'Central']\n"
                    "sales_rows = [{'region': ['North', 'South', 'West', 'Central'][i % 4], 'amount': (i * 29) % 97 + 5} for i in range(46)]"),
        Task('top_customer', 'data', 'Which customer in `spend_by_customer` spent the most?',
             "truth = {'answer': max(spend_by_customer, key=spend_by_customer.get), 'candidates': list(spend_by_customer)}",
             expect_first_of(), True,
             hidden="spend_by_customer = {'acme': 18250.4, 'globex': 19310.75, 'initech': 17990.0, 'umbrella': 19288.1, "
                    "'hooli': 12004.9, 'stark': 15500.0}"),
        Task('transactions_over_250', 'data', 'How many of the `transactions` are over 250?',
             'truth = sum(t > 250 for t in transactions)', num, True,
             hidden='transactions = [(i * 73) % 487 + 13 for i in range(40)]'),
        Task('lowest_stock', 'data', 'Which product in `stock` has the lowest stock?',
             "truth = {'answer': min(stock, key=stock.get), 'candidates': list(stock)}", expect_first_of(), True,
             hidden="stock = {'bolts': 412, 'nuts': 388, 'washers': 97, 'hinges': 103, 'brackets': 99, 'screws': 1024}"),
        Task('distinct_emails', 'data', 'How many distinct addresses are in `emails`?', 'truth = len(set(emails))', num, True,
             hidden="emails = [f'user{(i * 7) % 23}@example.org' for i in range(50)]"),
        Task('none_ages', 'data', 'How many entries of `ages` are None?', 'truth = sum(a is None for a in ages)', num, True,
             hidden='ages = [None if i % 7 == 3 else 18 + (i * 11) % 53 for i in range(90)]'),
        Task('billing_share', 'data', "What percentage of `tickets` have the category 'billing'?",
             "truth = 100 * sum(t['category'] == 'billing' for t in tickets) / len(tickets)",
             expect_number(also=lambda t: [t / 100]), True,
             hidden="tickets = [{'id': i, 'category': 'billing' if i % 8 in (1, 4, 6) else 'login' if i % 8 == 2 else 'bug'} "
                    "for i in range(64)]"),
    ]

def traceback_tasks() -> list[Task]:
    "A notebook whose cells were run in the kernel, one failing: the cause, the missing name, the bad entry."
    return [
        Task('name_error_missing_name', 'traceback', 'Why did the last cell fail? Which name is wrong?',
             "truth = error_of('statistics.mean(price)')['name']", expect_words(), False,
             cells=('import statistics', 'prices = [12.5, 8.0, 19.99, 4.25]', 'avg_price = statistics.mean(price)\navg_price')),
        Task('key_error_missing_key', 'traceback', 'Which key is missing, making the last cell fail?',
             "truth = error_of('row[\"profit\"]')['args'][0]", expect_words(), False,
             cells=('row = {"revenue": 1520.0, "cost": 980.5, "region": "EMEA"}', 'margin = row["profit"] - row["cost"]\nmargin')),
        Task('attribute_error_method', 'traceback', 'The last cell fails. What is wrong with it, and which method should I use?',
             # the missing attribute from the kernel's own error, and the list method that adds one item
             "truth = [error_of('names.push(\"cy\")')['name'], next(m for m in dir(list) if m == 'append')]", expect_words(), False,
             cells=('names = ["ana", "bo"]', 'names.push("cy")\nnames')),
        Task('zero_division_entry', 'traceback', 'Which entry of `pairs` makes the last cell fail?',
             "truth = {'answer': next(n for n, h, t in pairs if error_of(f'rate({h}, {t})')), 'candidates': [n for n, _, _ in pairs]}",
             expect_first_of(), False,
             cells=('def rate(hits, total):\n    return hits / total',
                    'pairs = [("north", 12, 40), ("south", 7, 0), ("east", 30, 64), ("west", 9, 27)]',
                    'rates = {name: rate(h, t) for name, h, t in pairs}\nrates')),
        Task('missing_module', 'traceback', 'Why does the first cell fail?',
             "truth = [error_of('import sales_helpers')['name'], ['not installed', 'no module', 'not found', 'missing', "
             "'cannot find', 'can\\'t find', 'does not exist', 'doesn\\'t exist', 'not available', 'install']]",
             expect_words(), False,
             cells=('import sales_helpers', 'df = sales_helpers.load("sales.csv")')),
        Task('value_error_bad_value', 'traceback', 'Which value in `raw` could not be converted?',
             "truth = float(next(x for x in raw if error_of(f'int({x!r})')))", expect_number(), False,
             cells=('raw = ["12", "7", "12.5", "30"]', 'counts = [int(x) for x in raw]\ncounts')),
        Task('empty_group_line', 'traceback', 'Which group makes the last cell fail, and which call inside `normalise` raises?',
             "bad = next(k for k, v in groups.items() if error_of(f'normalise({v!r})'))\n"
             "msg = error_of('normalise([])')['evalue']\n"
             "truth = [bad, next(f for f in ('max', 'min', 'sum') if f + '()' in msg)]", expect_words(), False,
             cells=('def normalise(xs):\n    top = max(xs)\n    return [x / top for x in xs]',
                    'groups = {"alpha": [3, 9, 6], "beta": [], "gamma": [4, 8]}',
                    'scaled = {k: normalise(v) for k, v in groups.items()}\nscaled')),
    ]

def code_tasks() -> list[Task]:
    "Code the model must write into the namespace, then run and checked there by the harness."
    ok = expect_verified()
    return [
        Task('write_slugify', 'code',
             'Define a function `slugify(s)` in my namespace: lowercase the text, turn every run of characters that are '
             'not a-z or 0-9 into one hyphen, and leave no hyphen at the start or the end.',
             'truth = None', ok, True,
             solution="import re\ndef slugify(s):\n    return re.sub(r'[^a-z0-9]+', '-', s.lower()).strip('-')",
             verify="import re\nref = lambda s: re.sub(r'[^a-z0-9]+', '-', s.lower()).strip('-')\n"
                    "cases = ['  Q3 Revenue -- Final (v2)!', 'Hello, World', '__init__', 'already-a-slug', 'Ice Cream & 2 Spoons']\n"
                    "got, want = [slugify(c) for c in cases], [ref(c) for c in cases]\n"
                    "result = {'ok': got == want, 'detail': f'got {got}, want {want}'}"),
        Task('make_totals', 'code',
             'Make a variable `totals`: a dict mapping each customer in `sales` to the sum of their amounts.',
             "truth = {}\nfor r in sales: truth[r['customer']] = truth.get(r['customer'], 0) + r['amount']", ok, True,
             hidden="sales = [{'customer': ('ada', 'bea', 'cai', 'dov')[i * 5 % 4], 'amount': round(3.5 + (i * 19) % 71 + (i % 5) * 0.2, 2)} "
                    "for i in range(30)]",
             solution="totals = {}\nfor r in sales: totals[r['customer']] = totals.get(r['customer'], 0) + r['amount']",
             verify="same = isinstance(totals, dict) and set(totals) == set(truth) and all(abs(totals[k] - truth[k]) < 1e-6 for k in truth)\n"
                    "result = {'ok': same, 'detail': f'totals = {totals!r:.200}, want {truth!r:.200}'}"),
        Task('filter_big_orders', 'code',
             'Create `big_orders`: the orders in `orders` whose amount is above 150, in their original order.',
             "truth = [o for o in orders if o['amount'] > 150]", ok, True,
             hidden="orders = [{'id': 500 + i, 'amount': (i * 67) % 240 + 0.5} for i in range(45)]",
             solution="big_orders = [o for o in orders if o['amount'] > 150]",
             verify="result = {'ok': list(big_orders) == truth, 'detail': f'{len(big_orders)} orders, want {len(truth)}'}"),
        Task('write_median', 'code',
             'Define `median_of(xs)` returning the median of a list of numbers (the mean of the two middle values when '
             'the length is even), without the statistics module.',
             'truth = None', ok, True,
             solution='def median_of(xs):\n    s, n = sorted(xs), len(xs)\n    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2',
             verify="import statistics\ncases = [[7, 1, 4], [10, 2, 8, 4], [5.5], [3, 3, 9, 1, 2, 8]]\n"
                    "got, want = [median_of(list(c)) for c in cases], [statistics.median(c) for c in cases]\n"
                    "result = {'ok': all(abs(g - w) < 1e-9 for g, w in zip(got, want)), 'detail': f'got {got}, want {want}'}"),
        Task('names_by_age', 'code', 'Make `names_by_age`: the names in `people`, oldest first.',
             'truth = [n for n, a in sorted(people, key=lambda p: -p[1])]', ok, True,
             hidden="people = [('Ines', 41), ('Tomas', 29), ('Aiko', 57), ('Raul', 35), ('Mette', 48)]",
             solution='names_by_age = [n for n, a in sorted(people, key=lambda p: p[1], reverse=True)]',
             verify="result = {'ok': list(names_by_age) == truth, 'detail': f'got {names_by_age!r}, want {truth!r}'}"),
        Task('word_counts', 'code',
             'Create `word_counts`, a dict counting how often each word occurs in `text` (lowercase the text and split it on whitespace).',
             'import collections\ntruth = dict(collections.Counter(text.lower().split()))', ok, True,
             hidden="text = 'The cat saw the dog The dog saw a bird and the bird saw nothing at all'",
             solution='word_counts = {}\nfor w in text.lower().split(): word_counts[w] = word_counts.get(w, 0) + 1',
             verify="result = {'ok': dict(word_counts) == truth, 'detail': f'got {dict(word_counts)!r:.200}'}"),
        Task('fix_parse_price', 'code',
             '`parse_price` fails on strings like "$1,299.00". Redefine it in my namespace so it returns a float for '
             'prices written with a $ sign and thousands commas.',
             'truth = None', ok, True,
             hidden='def parse_price(s):\n    return float(s)',
             solution="def parse_price(s):\n    return float(s.replace('$', '').replace(',', ''))",
             verify="cases = ['$2,500.75', '1,000', '$7', '13.5', '$12,345,678.9']\n"
                    "got, want = [parse_price(c) for c in cases], [2500.75, 1000.0, 7.0, 13.5, 12345678.9]\n"
                    "result = {'ok': all(abs(g - w) < 1e-9 for g, w in zip(got, want)), 'detail': f'got {got}'}"),
    ]

# an analysis notebook of 18 cells; the facts asked for are printed by its first cells
FAR_CELLS = (
    'import statistics, collections',
    "base = [dict(day=f'2024-02-{4 + (i * 7) % 25:02d}', user=f'u{(i * 7) % 53}', ms=(i * 37) % 911 + 20) for i in range(4346)]\n"
    "events = base + base[1200:1241]   # the export repeats a block\nprint(f'loaded {len(events):,} events')",
    "print('first day:', min(e['day'] for e in events), '| last day:', max(e['day'] for e in events))",
    "seen, deduped = set(), []\nfor e in events:\n    k = (e['day'], e['user'], e['ms'])\n    if k not in seen: seen.add(k); deduped.append(e)\n"
    "print(f'dropped {len(events) - len(deduped)} duplicate events')",
    "p90 = sorted(e['ms'] for e in deduped)[int(0.9 * len(deduped))]\nprint('p90 latency:', p90, 'ms')",
    '#md ## Users',
    "by_user = collections.Counter(e['user'] for e in deduped)\nprint(len(by_user), 'users')",
    'by_user.most_common(5)',
    "mean_ms = statistics.mean(e['ms'] for e in deduped)\nprint(f'mean latency {mean_ms:.1f} ms')",
    "by_day = collections.Counter(e['day'] for e in deduped)\nquietest = min(by_day, key=by_day.get)\nprint('quietest day', quietest, by_day[quietest])",
    '#md ## Latency',
    "slow = [e for e in deduped if e['ms'] > 800]\nprint(len(slow), 'slow events')",
    "buckets = collections.Counter(e['ms'] // 100 * 100 for e in deduped)\nfor b in sorted(buckets): print(f'{b:>4}-{b + 99:<4} {buckets[b]}')",
    "def share(pred): return sum(map(pred, deduped)) / len(deduped)\nprint(f\"{share(lambda e: e['ms'] < 200):.1%} under 200 ms\")",
    "slow_users = sorted({e['user'] for e in slow}, key=lambda u: int(u[1:]))\nprint(slow_users[:12])",
    "per_user_ms = {u: statistics.mean(e['ms'] for e in deduped if e['user'] == u) for u in list(by_user)[:6]}\n"
    "{u: round(v) for u, v in per_user_ms.items()}",
    "summary = dict(events=len(deduped), users=len(by_user), mean_ms=round(mean_ms, 1), slow=len(slow))\nsummary",
    '#md Next: split by user cohort.',
)

def far_tasks() -> list[Task]:
    "Facts in the outputs of the first cells of an 18-cell notebook."
    num = expect_number()
    return [
        Task('far_loaded_count', 'far cell', 'How many events did the load near the top of the notebook report?',
             'truth = len(events)', num, False, cells=FAR_CELLS),
        Task('far_first_day', 'far cell', 'What was the first day in the data, as printed near the top of the notebook?',
             "import datetime as dt\nd = dt.date.fromisoformat(min(e['day'] for e in events))\n"
             "truth = [[d.isoformat(), f'{d:%B} {d.day}', f'{d.day} {d:%B}', f'{d:%b} {d.day}', f'{d.day} {d:%b}']]",
             expect_words(), False, cells=FAR_CELLS),
        Task('far_duplicates', 'far cell', 'How many duplicate events were dropped early in the notebook?',
             'truth = len(events) - len(deduped)', num, False, cells=FAR_CELLS),
        Task('far_p90', 'far cell', 'What 90th-percentile latency did the notebook print near the top?',
             'truth = p90', num, False, cells=FAR_CELLS),
    ]

def later_tasks() -> list[Task]:
    "Nine more, of every kind, written after the tools last changed and before any model was asked them: a check that a gain is not the first 36's alone."
    num, ok = expect_number(), expect_verified()
    return [
        Task('temps_range', 'value', 'What is the range (largest minus smallest) of `temps_c`?',
             'truth = max(temps_c) - min(temps_c)', num, True,
             hidden='temps_c = [round(-4.5 + (i * 37) % 29 * 0.85, 2) for i in range(36)]'),
        Task('last_log_code', 'value', 'Which error code is on the last line of `log_text`?',
             "import re\ntruth = re.search(r'E\\d+', log_text.strip().splitlines()[-1]).group()", expect_words(), True,
             hidden="log_text = '\\n'.join(f'12:{m:02d} worker-{m % 3} failed with E{400 + m * 7}' for m in range(0, 50, 7))"),
        Task('most_common_city', 'data', 'Which city appears most often in `visits`?',
             "import collections\ntruth = {'answer': collections.Counter(visits).most_common(1)[0][0], 'candidates': sorted(set(visits))}",
             expect_first_of(), True,
             hidden="visits = [('Lyon', 'Porto', 'Oslo', 'Riga', 'Bern')[(i * i + i // 4) % 5] for i in range(71)]"),
        Task('march_orders', 'data', 'How many of the dates in `order_dates` fall in March?',
             "truth = sum(d[5:7] == '03' for d in order_dates)", num, True,
             hidden="order_dates = [f'2024-{1 + (i * 5) % 6:02d}-{1 + (i * 11) % 28:02d}' for i in range(83)]"),
        Task('short_week', 'traceback', 'Which week in `weeks` makes the last cell fail?',
             "truth = {'answer': next(k for k, v in weeks.items() if error_of(f'{v!r}[2]')), 'candidates': list(weeks)}",
             expect_first_of(), False,
             cells=('weeks = {"w1": [3, 5, 2], "w2": [4, 6, 1], "w3": [6, 2], "w4": [1, 1, 8]}',
                    'third_day = {k: v[2] for k, v in weeks.items()}\nthird_day')),
        Task('write_to_celsius', 'code', 'Define `to_celsius(f)` that converts a temperature in Fahrenheit to Celsius.',
             'truth = None', ok, True,
             solution='def to_celsius(f):\n    return (f - 32) * 5 / 9',
             verify="cases = [32, 212, -40, 98.6, 0]\ngot = [to_celsius(c) for c in cases]\n"
                    "result = {'ok': all(abs(g - (c - 32) * 5 / 9) < 1e-9 for g, c in zip(got, cases)), 'detail': f'got {got}'}"),
        Task('make_price_lookup', 'code', 'Make `price_of`: a dict from each product name in `products` to its price.',
             "truth = {p['name']: p['price'] for p in products}", ok, True,
             hidden="products = [{'name': n, 'price': round(2.5 + i * 3.15, 2), 'stock': (i * 13) % 40} "
                    "for i, n in enumerate(['kettle', 'mug', 'teapot', 'strainer', 'tray', 'spoon'])]",
             solution="price_of = {p['name']: p['price'] for p in products}",
             verify="result = {'ok': dict(price_of) == truth, 'detail': f'got {dict(price_of)!r:.200}'}"),
        Task('far_users', 'far cell', 'How many users did the notebook count in its Users section?',
             'truth = len(by_user)', num, False, cells=FAR_CELLS),
        Task('far_quietest_day', 'far cell', 'Which day was the quietest, as the notebook printed it?',
             "truth = [quietest]", expect_words(), False, cells=FAR_CELLS),
    ]

# ------------------------------------------------------------------------------------------------ DataFrame tasks
# Each DataFrame task's hidden setup writes its CSV files into the kernel's working folder (stdlib csv and a seeded
# random.Random, so the files are the same on every machine, whatever the day or time zone), in a namespace of its own:
# no name of ours is left in the user's. Then its notebook cells read them with pandas, as a user's would.
DATA_SRC = r'''
import csv, math, random, datetime as dt

def _write(path, header, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)

def sales(path='sales.csv', n=400, seed=51):
    "Sales of four products in four regions, January to June 2024: one row a sale."
    r = random.Random(seed)
    base = {'doohickey': 7.25, 'gadget': 23.0, 'gizmo': 31.9, 'widget': 12.5}
    regions, weights = ['east', 'north', 'south', 'west'], [2, 3, 2, 3]
    rows = []
    for _ in range(n):
        d = dt.date(2024, 1, 1) + dt.timedelta(days=r.randrange(182))
        p = r.choice(sorted(base))
        region = r.choices(regions, weights)[0]
        units = r.randint(1, 9)
        price = round(base[p] * r.uniform(0.85, 1.15), 2)
        revenue = round(units * price, 2)
        rows.append([d.isoformat(), region, p, units, price, revenue, round(revenue * r.uniform(0.45, 0.8), 2)])
    rows.sort(key=lambda x: x[0])
    _write(path, ['date', 'region', 'product', 'units', 'price', 'revenue', 'cost'], rows)

def sensors(path='sensors.csv', seed=52):
    "Three sensors read every 30 minutes for four days (May 2024): temperature and humidity, some readings missing."
    r = random.Random(seed)
    rows = []
    for step in range(4 * 48):
        t = dt.datetime(2024, 5, 6) + dt.timedelta(minutes=30 * step)
        wave = math.sin(2 * math.pi * (t.hour + t.minute / 60 - 9) / 24)
        for s, off in (('s1', 0.0), ('s2', 1.8), ('s3', -2.4)):
            temp = 17 + off + 5 * wave + r.gauss(0, 0.6) - 0.8 * (step // 48 == 1)
            hum = 55 - 8 * wave + r.gauss(0, 2)
            rows.append([t.strftime('%Y-%m-%d %H:%M:%S'), s, '' if r.random() < 0.02 else round(temp, 2),
                         '' if r.random() < 0.06 else round(hum, 1)])
    _write(path, ['timestamp', 'sensor', 'temp_c', 'humidity'], rows)

FIRST = ['Ana', 'Ben', 'Chloe', 'Dev', 'Elif', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Kira', 'Liam', 'Maya',
         'Nils', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sami', 'Tara', 'Umar', 'Vera', 'Wen', 'Yusuf', 'Zoe']
LAST = ['Adler', 'Brandt', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Horvat', 'Ito', 'Jensen', 'Kowalski', 'Lopez']

def employees(path='employees.csv', n=60, seed=53):
    "Staff: department, title, salary, hire date, city (written untidily: ' Berlin', 'BERLIN'), e-mail."
    r = random.Random(seed)
    names = r.sample([f'{a} {b}' for a in FIRST for b in LAST], n)
    pay = {'engineering': 72000, 'finance': 66000, 'marketing': 61000, 'sales': 58000, 'support': 47000}
    job = {'engineering': 'Engineer', 'finance': 'Analyst', 'marketing': 'Marketer', 'sales': 'Account Executive',
           'support': 'Support Agent'}
    rows = []
    for i, name in enumerate(names):
        dept = r.choice(sorted(pay))
        senior = r.random() < 0.35
        salary = int(round(pay[dept] * (1.3 if senior else 1.0) * r.uniform(0.85, 1.2), -2))
        hired = dt.date(2015, 1, 1) + dt.timedelta(days=r.randrange(3650))
        city = r.choice(['Berlin', 'Lisbon', 'Leeds', 'Austin', 'Oslo'])
        city = r.choice([city, city, f' {city}', f'{city} ', city.upper(), city.lower()])
        domain = r.choices(['acme.com', 'acme.co.uk', 'acme-labs.io'], [3, 5, 2])[0]
        rows.append([1001 + i, name, dept, ('Senior ' if senior else '') + job[dept], salary, hired.isoformat(), city,
                     name.lower().replace(' ', '.') + '@' + domain])
    _write(path, ['emp_id', 'name', 'department', 'title', 'salary', 'hire_date', 'city', 'email'], rows)

COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Tyrell', 'Cyberdyne', 'Soylent',
             'Wonka', 'Vandelay', 'Gringotts', 'Oscorp', 'Nakatomi', 'Monarch', 'Aperture', 'Zorg', 'Duff', 'Krusty']

def customers(path='customers.csv', seed=54, id_col='customer_id'):
    "Twenty customers: id C001..C020, name, country, segment."
    r = random.Random(seed)
    rows = [[f'C{i:03d}', name, r.choice(['DE', 'FR', 'PT', 'UK', 'US']), r.choice(['consumer', 'enterprise', 'smb'])]
            for i, name in enumerate(COMPANIES, 1)]
    _write(path, [id_col, 'name', 'country', 'segment'], rows)

def orders(path='orders.csv', n=250, seed=55, dups=0):
    "Orders January to April 2024; a few name customers C021..C023, who are in no customers file; `dups` rows repeated."
    r = random.Random(seed)
    rows = []
    for i in range(n):
        d = dt.date(2024, 1, 1) + dt.timedelta(days=r.randrange(121))
        rows.append([5000 + i, f'C{r.randint(1, 23):03d}', d.isoformat(), round(r.lognormvariate(4.5, 0.6), 2),
                     r.choices(['shipped', 'pending', 'returned', 'cancelled'], [70, 12, 10, 8])[0]])
    for _ in range(dups): rows.insert(r.randrange(len(rows)), list(rows[r.randrange(n)]))
    _write(path, ['order_id', 'customer_id', 'order_date', 'amount', 'status'], rows)

def survey(path='survey.csv', n=150, seed=56):
    "A customer survey with gaps: age, satisfaction (1-5), income and comment are each sometimes left blank."
    r = random.Random(seed)
    rows = []
    for i in range(n):
        rows.append([i + 1, '' if r.random() < 0.08 else r.randint(18, 75), r.choice(['DE', 'FR', 'PT', 'UK']),
                     '' if r.random() < 0.14 else r.choices([1, 2, 3, 4, 5], [1, 2, 4, 6, 4])[0],
                     '' if r.random() < 0.3 else int(round(r.gauss(42000, 12000), -2)),
                     r.choice(['', 'fast delivery', 'too expensive', 'great support', 'app crashes', 'ok'])])
    _write(path, ['respondent', 'age', 'country', 'satisfaction', 'income', 'comment'], rows)

def payments(path='payments.csv', n=80, seed=57):
    "Payments whose amounts are written with thousands commas ('1,234.50'), so pandas reads the column as text."
    r = random.Random(seed)
    rows = [[f'P{i + 1:04d}', (dt.date(2024, 3, 1) + dt.timedelta(days=r.randrange(31))).isoformat(),
             r.choice(COMPANIES[:8]), f'{r.uniform(150, 4800):,.2f}', r.choice(['card', 'transfer', 'cash'])]
            for i in range(n)]
    _write(path, ['payment_id', 'date', 'customer', 'amount', 'method'], rows)
'''

def write_data(*calls:str) -> str:
    "Hidden setup code that writes the CSV files `calls` make (e.g. \"sales('sales.csv')\") in a namespace of its own."
    return f"exec({DATA_SRC + chr(10) + chr(10).join(calls)!r}, {{'__name__': '__agent_tasks_data__'}})"

# Figures made in the kernel, kept (a strong reference) from the moment they are made: the inline backend closes a
# cell's figures when it ends, and the agent may show and close them itself; a plot task's verify reads them here.
FIGURES = '''def __agent_tasks_figures():
    import sys, types, functools, matplotlib.figure as mf
    if '__agent_tasks_figures__' in sys.modules: return
    reg = sys.modules['__agent_tasks_figures__'] = types.ModuleType('__agent_tasks_figures__')
    reg.figures, init = [], mf.Figure.__init__
    @functools.wraps(init)
    def tracked(self, *a, **k):
        init(self, *a, **k)
        reg.figures.append(self)
    mf.Figure.__init__ = tracked
__agent_tasks_figures(); del __agent_tasks_figures'''

# verify code of the plot tasks: the axes of the figures made since the truth was computed (truth['figures'])
NEW_AXES = ("import sys\nfigs = sys.modules['__agent_tasks_figures__'].figures[truth['figures']:]\n"
            "axes = [a for f in figs for a in f.axes]\n"
            "def same(xs, ys):\n    xs, ys = sorted(map(float, xs)), sorted(map(float, ys))\n"
            "    return len(xs) == len(ys) and all(abs(a - b) <= 1e-6 * max(1.0, abs(b)) for a, b in zip(xs, ys))\n")
FIGURES_NOW = "import sys\nfigures = len(sys.modules['__agent_tasks_figures__'].figures)\n"

PANDAS = ('pandas', 'numpy')
PLOTS = ('pandas', 'numpy', 'matplotlib')
DAYS = "['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']"

SALES = ('import pandas as pd', "df = pd.read_csv('sales.csv')", 'df.head()')
SENSORS = ('import pandas as pd', "df = pd.read_csv('sensors.csv')", 'df.head()')
STAFF = ('import pandas as pd', "df = pd.read_csv('employees.csv')", 'print(df.shape)\ndf.columns.tolist()')
SURVEY = ('import pandas as pd', "df = pd.read_csv('survey.csv')", 'df.head()')
PAYMENTS = ('import pandas as pd', "df = pd.read_csv('payments.csv')", 'df.head(3)')
SHOP = ('import pandas as pd', "orders = pd.read_csv('orders.csv')\ncustomers = pd.read_csv('customers.csv')",
        'orders.head()', 'customers.head()')

def frame(name, kind, question, truth, check, data:tuple, cells:tuple, needs_tool=True, needs=PANDAS, figures=False, **kw) -> Task:
    "A task on DataFrames read from CSV files the hidden setup wrote (and, for a plot, the figures it keeps)."
    hidden = write_data(*data) + ('\n' + FIGURES if figures else '')
    return Task(name, kind, question, truth, check, needs_tool, hidden=hidden, cells=cells, needs=needs, **kw)

def frame_tasks() -> list[Task]:
    "Questions on DataFrames: groupby and aggregates, filters, dates, missing values, merges, dtypes, sorting, pivots, strings."
    num, first, words, one = expect_number(), expect_first_of(), expect_words(), expect_missing()
    S, SE, E, SU, P, SH = ("sales('sales.csv')",), ("sensors('sensors.csv')",), ("employees('employees.csv')",), \
                          ("survey('survey.csv')",), ("payments('payments.csv')",), ("orders('orders.csv')", "customers('customers.csv')")
    month = ("import calendar\nm = int({m})\n"
             "truth = {{'answer': [calendar.month_name[m], calendar.month_abbr[m], f'2024-{{m:02d}}'],\n"
             "          'candidates': [[calendar.month_name[i], calendar.month_abbr[i], f'2024-{{i:02d}}'] for i in range(1, 13)]}}")
    return [
        frame('df_top_product_units', 'frame', 'Which product sold the most units in total?',
              "s = df.groupby('product')['units'].sum()\ntruth = {'answer': str(s.idxmax()), 'candidates': sorted(map(str, s.index))}",
              first, S, SALES),
        frame('df_revenue_over_100', 'frame', 'How many rows of df have revenue above 100?',
              "truth = int((df['revenue'] > 100).sum())", num, S, SALES),
        frame('df_region_march', 'frame', 'Which region had the highest total revenue in March 2024?',
              "d = pd.to_datetime(df['date'])\ns = df[(d.dt.year == 2024) & (d.dt.month == 3)].groupby('region')['revenue'].sum()\n"
              "truth = {'answer': str(s.idxmax()), 'candidates': sorted(map(str, df['region'].unique()))}", first, S, SALES),
        frame('df_mean_gadget_price', 'frame', 'What is the average price of a gadget in df?',
              "truth = float(df.loc[df['product'] == 'gadget', 'price'].mean())", num, S, SALES),
        frame('df_best_month', 'frame', 'In which month was the total revenue in df highest?',
              month.format(m="df.groupby(pd.to_datetime(df['date']).dt.month)['revenue'].sum().idxmax()"), one, S, SALES),
        frame('df_pivot_west_gizmo', 'frame',
              'In a pivot table of total revenue with regions as rows and products as columns, what is the value for west and gizmo?',
              "truth = float(df.pivot_table(index='region', columns='product', values='revenue', aggfunc='sum').loc['west', 'gizmo'])",
              num, S, SALES),
        frame('df_weekday_orders', 'frame', 'On which day of the week were the most orders placed?',
              "s = pd.to_datetime(orders['order_date']).dt.day_name().value_counts()\n"
              f"truth = {{'answer': str(s.idxmax()), 'candidates': {DAYS}}}", first, SH, SHOP),
        frame('df_orders_in_range', 'frame', 'How many orders were placed from 2024-02-10 to 2024-02-20, both days included?',
              "d = pd.to_datetime(orders['order_date'])\ntruth = int(d.between('2024-02-10', '2024-02-20').sum())", num, SH, SHOP),
        frame('df_sensor_mean_s2', 'frame', 'What is the mean temp_c of sensor s2?',
              "truth = float(df.loc[df['sensor'] == 's2', 'temp_c'].mean())", num, SE, SENSORS),
        frame('df_missing_humidity', 'frame', 'How many humidity readings are missing in df?',
              "truth = int(df['humidity'].isna().sum())", num, SE, SENSORS),
        frame('df_warmest_hour', 'frame', 'At which hour of the day is the average temp_c highest, over all sensors and days?',
              "truth = int(df.groupby(pd.to_datetime(df['timestamp']).dt.hour)['temp_c'].mean().idxmax())", num, SE, SENSORS),
        frame('df_coldest_day_s1', 'frame', 'On which date did sensor s1 record its lowest temp_c?',
              "s1 = df[df['sensor'] == 's1']\nd = pd.Timestamp(s1.loc[s1['temp_c'].idxmin(), 'timestamp'])\n"
              "th = {1: 'st', 2: 'nd', 3: 'rd'}.get(d.day % 10 if d.day // 10 != 1 else 0, 'th')\n"
              "truth = [[d.strftime('%Y-%m-%d'), f'{d:%B} {d.day}', f'{d.day} {d:%B}', f'{d:%b} {d.day}', f'{d.day} {d:%b}',\n"
              "          f'{d:%B} {d.day}{th}', f'{d.day}{th} {d:%B}', f'{d:%b} {d.day}{th}']]",
              words, SE, SENSORS),
        frame('df_most_missing_column', 'frame', 'Which column of df has the most missing values?',
              "s = df.isna().sum()\ntruth = {'answer': str(s.idxmax()), 'candidates': list(map(str, df.columns))}", first, SU, SURVEY),
        frame('df_mean_age', 'frame', 'What is the mean age of the respondents who gave their age?',
              "truth = float(df['age'].mean())", num, SU, SURVEY),
        frame('df_satisfied_share', 'frame',
              'Of the respondents who answered the satisfaction question, what percentage gave 4 or 5?',
              "s = df['satisfaction'].dropna()\ntruth = float(100 * (s >= 4).mean())",
              expect_number(also=lambda t: [t / 100]), SU, SURVEY),
        frame('df_dept_median_salary', 'frame', 'Which department has the highest median salary?',
              "s = df.groupby('department')['salary'].median()\ntruth = {'answer': str(s.idxmax()), 'candidates': sorted(map(str, s.index))}",
              first, E, STAFF),
        frame('df_hired_2021', 'frame', 'How many employees were hired in 2021?',
              "truth = int((pd.to_datetime(df['hire_date']).dt.year == 2021).sum())", num, E, STAFF),
        frame('df_email_domain', 'frame', 'Which e-mail domain is the most common among the employees?',
              "s = df['email'].str.split('@').str[1].value_counts()\ntruth = {'answer': str(s.idxmax()), 'candidates': sorted(map(str, s.index))}",
              first, E, STAFF),
        frame('df_senior_titles', 'frame', "How many employees have 'Senior' in their title?",
              "truth = int(df['title'].str.contains('Senior').sum())", num, E, STAFF),
        frame('df_berlin_staff', 'frame',
              'How many employees work in Berlin? The city column is written untidily (spaces, upper and lower case).',
              "truth = int((df['city'].str.strip().str.lower() == 'berlin').sum())", num, E, STAFF),
        frame('df_latest_hire', 'frame', 'Who is the most recently hired employee?',
              "d = pd.to_datetime(df['hire_date'])\ntruth = {'answer': str(df.loc[d.idxmax(), 'name']), 'candidates': list(map(str, df['name']))}",
              first, E, STAFF),
        frame('df_country_spend', 'frame',
              "Joining `orders` to `customers` on customer_id, which country's customers spent the most in total?",
              "m = orders.merge(customers, on='customer_id')\ns = m.groupby('country')['amount'].sum()\n"
              "truth = {'answer': str(s.idxmax()), 'candidates': sorted(map(str, customers['country'].unique()))}", first, SH, SHOP),
        frame('df_unknown_customers', 'frame', 'How many orders have a customer_id that is not in `customers`?',
              "truth = int((~orders['customer_id'].isin(customers['customer_id'])).sum())", num, SH, SHOP),
        frame('df_top3_customers', 'frame',
              'Which three customers (their names in `customers`) have the highest total order amount in `orders`?',
              "m = orders.merge(customers, on='customer_id')\ntruth = list(map(str, m.groupby('name')['amount'].sum().nlargest(3).index))",
              words, SH, SHOP),
        frame('df_returned_enterprise', 'frame',
              "How many orders with the status 'returned' come from customers in the 'enterprise' segment?",
              "m = orders.merge(customers, on='customer_id')\ntruth = int(pd.crosstab(m['status'], m['segment']).loc['returned', 'enterprise'])",
              num, SH, SHOP),
        frame('df_shipped_median', 'frame', "What is the median amount of the orders whose status is 'shipped'?",
              "truth = float(orders.loc[orders['status'] == 'shipped', 'amount'].median())", num, SH, SHOP),
        frame('df_payments_total', 'frame', 'What is the total of the amount column of df?',
              "truth = float(df['amount'].astype(str).str.replace(',', '').astype(float).sum())", num, P, PAYMENTS),
        frame('df_text_column', 'frame', 'Which column of df holds numbers but was read as text?',
              "import pandas.api.types as t\n"
              "ok = lambda c: pd.to_numeric(df[c].astype(str).str.replace(',', ''), errors='coerce').notna().all()\n"
              "truth = {'answer': next(c for c in df.columns if not t.is_numeric_dtype(df[c]) and ok(c)), 'candidates': list(map(str, df.columns))}",
              first, P, PAYMENTS),
    ]

def frame_error_tasks() -> list[Task]:
    "A pandas error to explain (the notebook shows it), or to explain and fix (checked in the kernel afterwards)."
    words, ok = expect_words(), expect_verified()
    S, P, SH = ("sales('sales.csv')",), ("payments('payments.csv')",), ("orders('orders.csv')", "customers('customers_v2.csv', id_col='cust_id')")
    return [
        frame('df_key_error_column', 'frame-error', 'Why does the last cell fail, and what is the column really called?',
              "import difflib\nbad = error_of(\"df['revenu'].sum()\")['args'][0]\ntruth = [bad, difflib.get_close_matches(bad, list(df.columns), 1)[0]]",
              words, S, SALES + ("df['revenu'].sum()",), needs_tool=False),
        frame('df_merge_key_error', 'frame-error', 'Why does the merge in the last cell fail?',
              "bad = error_of(\"orders.merge(customers, on='customer_id')\")['args'][0]\n"
              "truth = [bad, next(c for c in customers.columns if c not in orders.columns and c.endswith('id'))]",
              words, SH, ('import pandas as pd', "orders = pd.read_csv('orders.csv')\ncustomers = pd.read_csv('customers_v2.csv')",
                          "merged = orders.merge(customers, on='customer_id')\nmerged.head()"), needs_tool=False),
        frame('df_date_compare_error', 'frame-error', 'Why does the last cell fail, and how do I fix it?',
              "assert error_of(\"df[df['date'] >= pd.Timestamp('2024-03-01')]\")['ename'] == 'TypeError'\n"
              "truth = [[str(df['date'].dtype), 'string', 'strings', 'str', 'text', 'object'], ['to_datetime', 'parse_dates']]",
              words, S, SALES + ("spring = df[df['date'] >= pd.Timestamp('2024-03-01')]\nspring.shape",), needs_tool=False),
        frame('df_sort_attribute_error', 'frame-error', 'The last cell fails. Which method should I use to sort df by revenue?',
              "import inspect\nassert error_of(\"df.sort('revenue', ascending=False)\")['ename'] == 'AttributeError'\n"
              "truth = [next(m for m in dir(type(df)) if m.startswith('sort_') and 'by' in inspect.signature(getattr(type(df), m)).parameters)]",
              words, S, SALES + ("df.sort('revenue', ascending=False).head()",), needs_tool=False),
        frame('df_fix_text_amounts', 'frame-error',
              'The last cell fails. Fix `df` so that its amount column holds numbers and the last cell works.',
              "e = error_of(\"df['amount'].mean()\")\nassert e, 'the cell was meant to fail'\n"
              "truth = [float(str(a).replace(',', '')) for a in df['amount']]",
              ok, P, PAYMENTS + ("df['amount'].mean()",),
              solution="df['amount'] = df['amount'].str.replace(',', '').astype(float)",
              verify="e = error_of(\"df['amount'].mean()\")\ngot = df['amount'].tolist()\n"
                     "same = len(got) == len(truth) and all(isinstance(g, (int, float)) and abs(g - w) < 1e-6 for g, w in zip(got, truth))\n"
                     "result = {'ok': e is None and same, 'detail': f'error {e and e[\"evalue\"]!r:.80}; amounts {got[:3]!r:.80}'}"),
        frame('df_fix_chained_assignment', 'frame-error',
              'The last cell should cap the units at 8 in df, but df still has units above 8. Why? Fix df so that no row has more than 8 units.',
              "assert (df['units'] > 8).any()\ntruth = {'units': df['units'].clip(upper=8).tolist(), 'revenue': df['revenue'].tolist()}",
              ok, S, SALES + ("df[df['units'] > 8]['units'] = 8\ndf['units'].max()",),
              solution="df.loc[df['units'] > 8, 'units'] = 8",
              verify="result = {'ok': df['units'].tolist() == truth['units'] and df['revenue'].tolist() == truth['revenue'],\n"
                     "          'detail': f\"max units {df['units'].max()}, {len(df)} rows\"}"),
    ]

def frame_edit_tasks() -> list[Task]:
    "Edits to the user's DataFrames (a column, gaps filled, a rename, dtypes, duplicates, new frames), checked in the kernel after the turn."
    ok = expect_verified()
    S, SE, E, SU, SH = ("sales('sales.csv')",), ("sensors('sensors.csv')",), ("employees('employees.csv')",), ("survey('survey.csv')",), \
                       ("orders('orders.csv')", "customers('customers.csv')")
    return [
        frame('df_add_margin', 'frame-edit', 'Add a column `margin` to df: the revenue minus the cost.',
              "truth = (df['revenue'] - df['cost']).tolist()", ok, S, SALES,
              solution="df['margin'] = df['revenue'] - df['cost']",
              verify="got = df['margin'].tolist() if 'margin' in df else []\n"
                     "result = {'ok': len(got) == len(truth) and all(abs(g - w) < 1e-6 for g, w in zip(got, truth)), 'detail': f'margin {got[:4]!r:.100}'}"),
        frame('df_fill_satisfaction', 'frame-edit', "Fill the missing values of df's satisfaction column with that column's median.",
              "truth = df['satisfaction'].fillna(df['satisfaction'].median()).tolist()", ok, SU, SURVEY,
              solution="df['satisfaction'] = df['satisfaction'].fillna(df['satisfaction'].median())",
              verify="got = df['satisfaction'].tolist()\n"
                     "result = {'ok': got == truth, 'detail': f\"{int(df['satisfaction'].isna().sum())} still missing; {got[:6]!r:.100}\"}"),
        frame('df_rename_column', 'frame-edit', 'Rename the column `cust_id` of `customers` to `customer_id`.',
              "truth = ['customer_id' if c == 'cust_id' else c for c in customers.columns]", ok,
              ("customers('customers_v2.csv', id_col='cust_id')",), ('import pandas as pd', "customers = pd.read_csv('customers_v2.csv')", 'customers.head()'),
              solution="customers = customers.rename(columns={'cust_id': 'customer_id'})",
              verify="result = {'ok': list(customers.columns) == truth and len(customers) == 20, 'detail': f'columns {list(customers.columns)}'}"),
        frame('df_parse_timestamps', 'frame-edit', 'Make the timestamp column of df real datetimes instead of text.',
              "truth = [str(pd.Timestamp(t)) for t in df['timestamp']]", ok, SE, SENSORS,
              solution="df['timestamp'] = pd.to_datetime(df['timestamp'])",
              verify="import pandas.api.types as t\ncol = df['timestamp']\n"
                     "result = {'ok': t.is_datetime64_any_dtype(col) and [str(x) for x in col] == truth, 'detail': f'dtype {col.dtype}'}"),
        frame('df_drop_duplicates', 'frame-edit', 'Remove the duplicated rows from `orders`, keeping the first of each.',
              "truth = orders.drop_duplicates()['order_id'].tolist()", ok,
              ("orders('orders.csv', dups=9)", "customers('customers.csv')"), SHOP,
              solution='orders = orders.drop_duplicates()',
              verify="got = orders['order_id'].tolist()\nresult = {'ok': got == truth, 'detail': f'{len(got)} rows, want {len(truth)}'}"),
        frame('df_big_orders', 'frame-edit', 'Create `big_orders`: the rows of `orders` with an amount above 200, largest amount first.',
              "truth = orders[orders['amount'] > 200].sort_values('amount', ascending=False)['amount'].tolist()", ok, SH, SHOP,
              solution="big_orders = orders[orders['amount'] > 200].sort_values('amount', ascending=False)",
              verify="got = big_orders['amount'].tolist()\nresult = {'ok': got == truth, 'detail': f'{len(got)} rows, want {len(truth)}; {got[:4]!r:.80}'}"),
        frame('df_monthly_series', 'frame-edit', 'Make `monthly`: the total revenue of df per month, one value per month in month order.',
              "truth = df.groupby(pd.to_datetime(df['date']).dt.to_period('M'))['revenue'].sum().tolist()", ok, S, SALES,
              solution="monthly = df.groupby(pd.to_datetime(df['date']).dt.to_period('M'))['revenue'].sum()",
              verify="import pandas as pd\ns = monthly.squeeze() if isinstance(monthly, pd.DataFrame) else pd.Series(monthly)\n"
                     "got = [float(x) for x in s.tolist()]\n"
                     "result = {'ok': len(got) == len(truth) and all(abs(g - w) < 1e-6 for g, w in zip(got, truth)), 'detail': f'{got!r:.120}'}"),
        frame('df_merge_frames', 'frame-edit',
              'Make `merged`: `orders` joined with `customers` on customer_id, keeping only the orders whose customer is known.',
              "truth = sorted(orders.merge(customers, on='customer_id')['order_id'].tolist())", ok, SH, SHOP,
              solution="merged = orders.merge(customers, on='customer_id')",
              verify="got = sorted(merged['order_id'].tolist())\n"
                     "result = {'ok': got == truth and {'name', 'country'} <= set(merged.columns), 'detail': f'{len(got)} rows, want {len(truth)}; columns {list(merged.columns)}'}"),
        frame('df_clean_city', 'frame-edit',
              "Clean df's city column: strip the spaces around each value and write it in lowercase.",
              "truth = df['city'].str.strip().str.lower().tolist()", ok, E, STAFF,
              solution="df['city'] = df['city'].str.strip().str.lower()",
              verify="result = {'ok': df['city'].tolist() == truth, 'detail': f\"{sorted(set(df['city']))!r:.120}\"}"),
    ]

def plot_tasks() -> list[Task]:
    "A figure asked for, checked in the kernel: its lines or bars hold the right values, or it has the title and label asked."
    ok = expect_verified()
    S, SE, E = ("sales('sales.csv')",), ("sensors('sensors.csv')",), ("employees('employees.csv')",)
    return [
        frame('plot_monthly_revenue', 'plot', 'Plot the total revenue per month of df as a line chart.',
              FIGURES_NOW + "truth = {'figures': figures, 'values': df.groupby(df['date'].str[:7])['revenue'].sum().tolist()}",
              ok, S, SALES, needs=PLOTS, figures=True,
              solution="import matplotlib.pyplot as plt\ndf.groupby(pd.to_datetime(df['date']).dt.to_period('M'))['revenue'].sum().plot()\nplt.show()",
              verify=NEW_AXES + "lines = [l for a in axes for l in a.get_lines()]\n"
                     "result = {'ok': any(same(l.get_ydata(), truth['values']) for l in lines),\n"
                     "          'detail': f'{len(figs)} figures, {len(lines)} lines of {[len(l.get_ydata()) for l in lines][:5]} points'}"),
        frame('plot_units_bar', 'plot', 'Make a bar chart of the total units sold per product.',
              FIGURES_NOW + "truth = {'figures': figures, 'values': df.groupby('product')['units'].sum().tolist()}",
              ok, S, SALES, needs=PLOTS, figures=True,
              solution="import matplotlib.pyplot as plt\ndf.groupby('product')['units'].sum().plot.bar()\nplt.show()",
              verify=NEW_AXES + "bars = [[p.get_height() for p in a.patches] for a in axes] + [[p.get_width() for p in a.patches] for a in axes]\n"
                     "result = {'ok': any(same(b, truth['values']) for b in bars), 'detail': f'{len(figs)} figures, bars {[len(b) for b in bars]}'}"),
        frame('plot_sensor_lines', 'plot', 'Plot temp_c over time, one line per sensor, in one chart.',
              FIGURES_NOW + "truth = {'figures': figures, 'sensors': int(df['sensor'].nunique()), 'points': int(df.groupby('sensor').size().min())}",
              ok, SE, SENSORS, needs=PLOTS, figures=True,
              solution="import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
                       "for s, g in df.groupby('sensor'): ax.plot(pd.to_datetime(g['timestamp']), g['temp_c'], label=s)\nax.legend()\nplt.show()",
              verify=NEW_AXES + "counts = [sum(len(l.get_xdata()) >= truth['points'] * 0.9 for l in a.get_lines()) for a in axes]\n"
                     "result = {'ok': truth['sensors'] in counts, 'detail': f'{len(figs)} figures; long lines per axes {counts}'}"),
        frame('plot_salary_hist', 'plot',
              "Plot a histogram of the salaries in df with the title 'Salaries' and the x-axis label 'salary (EUR)'.",
              FIGURES_NOW + "truth = {'figures': figures, 'title': 'Salaries', 'xlabel': 'salary (EUR)'}",
              ok, E, STAFF, needs=PLOTS, figures=True,
              solution="import matplotlib.pyplot as plt\nplt.hist(df['salary'])\nplt.title('Salaries')\nplt.xlabel('salary (EUR)')\nplt.show()",
              verify=NEW_AXES + "hit = [a for a in axes if truth['title'].lower() in (a.get_title().strip().lower(), a.figure.get_suptitle().strip().lower())]\n"
                     "hit = [a for a in hit if a.get_xlabel().strip() == truth['xlabel'] and len(a.patches) >= 3]\n"
                     "result = {'ok': bool(hit), 'detail': f'{len(figs)} figures; titles {[a.get_title() for a in axes]}, x labels {[a.get_xlabel() for a in axes]}'}"),
    ]

def dataframe_tasks() -> list[Task]:
    "Every DataFrame task, the kinds taken in turn (so that a short `-k df_` or `--tasks` run sees each kind)."
    groups = [frame_tasks(), frame_edit_tasks(), frame_error_tasks(), plot_tasks()]
    out = []
    for i in range(max(map(len, groups))):
        out += [g[i] for g in groups if i < len(g)]
    return out

def all_tasks() -> list[Task]:
    "Every task, the kinds taken in turn (so that `--tasks N` tries a mix), then the later ones, then the DataFrame ones."
    groups = [value_tasks(), data_tasks(), traceback_tasks(), code_tasks(), far_tasks()]
    out = []
    for i in range(max(map(len, groups))):
        out += [g[i] for g in groups if i < len(g)]
    return out + later_tasks() + dataframe_tasks()

# ---------------------------------------------------------------------------------------------------- kernel side
# Helper cells run with store_history=False: they are in no `In[n]`, so the agent never shows them to the model.

def namespace_cell(code:str, out:str, given:dict|None=None) -> str:
    "A cell that runs `code` on a copy of the user's namespace (no name of ours is left in it) and prints the variable `out` as JSON."
    return f'''def __agent_tasks_run():
    import json, traceback
    def error_of(src):
        "The exception `src` raises in the namespace, as a dict; None when it runs."
        try: exec(src, dict(ns))
        except BaseException as e: return {{'ename': type(e).__name__, 'evalue': str(e), 'args': [str(a) for a in e.args],
                                           'name': getattr(e, 'name', None)}}
        return None
    ns = dict(get_ipython().user_ns)
    g = dict(ns, error_of=error_of, **json.loads({json.dumps(given or {})!r}))
    try:
        exec({code!r}, g)
        res = {{'ok': True, 'value': g.get({out!r})}}
    # the code is the task's own, or runs the model's function: whatever it raises is the result to record
    except BaseException as e: res = {{'ok': False, 'error': ''.join(traceback.format_exception_only(type(e), e)).strip()}}
    print({MARK!r} + json.dumps(res, default=repr) + {MARK!r})
__agent_tasks_run(); del __agent_tasks_run'''

def warm_cell(model:str) -> str:
    "A cell that starts the model's llama-server in the kernel (when it is a managed local one) and prints its pid."
    return f'''def __agent_tasks_warm():
    import json
    from ramabana.core import engine_config, resolve
    from ramabana import llamaserver
    spec = resolve({model!r})
    if spec.runtime == 'llamacpp' and not spec.base_url: llamaserver.server_url(spec, engine_config=engine_config())   # as the gateway will
    from ramabana.magic import session
    if (w := session().warming) is not None: w.join()   # %load_ext's warm-up, done while a user writes the question
    s = llamaserver.running(spec)
    print({MARK!r} + json.dumps({{'pid': s.pid if s else None}}) + {MARK!r})
__agent_tasks_warm(); del __agent_tasks_warm'''

def dump_cell() -> str:
    "A cell that prints the turn as the kernel's session holds it: answer, error, tool calls and results, tool schemas, ledger rows."
    return f'''def __agent_tasks_dump():
    import json, re, sys
    from ramabana.magic import session
    s = session()
    a, last = s.agent, s.last
    calls, results, shown, sources = [], [], [], []
    def text(c): return c if isinstance(c, str) else ' '.join(str(p.get('text', '')) if isinstance(p, dict) else str(p) for p in c or [])
    for m in (a.history if a is not None else []):
        if m.get('role') in ('user', 'tool'): sources.append(text(m.get('content')))   # what the model was shown and what its calls returned
        sources += [str((c.get('function') or {{}}).get('arguments')) for c in m.get('tool_calls') or []]   # the code it ran
        if m.get('role') == 'assistant':
            for c in m.get('tool_calls') or []:
                fn = c.get('function') or {{}}
                calls.append({{'id': c.get('id'), 'name': fn.get('name'), 'arguments': fn.get('arguments')}})
        elif m.get('role') == 'tool':
            results.append({{'id': m.get('tool_call_id'), 'name': m.get('name'), 'content': str(m.get('content'))[:3000],
                            'head': text(m.get('content'))[:300]}})
        elif m.get('role') == 'user' and isinstance(m.get('content'), str):
            shown += re.findall(r'<cell id="([^"]+)"', m['content'])
    lc = sys.modules.get('ramabana.llamaserver')   # the managed servers (llamacpp is the upstream since the engines split)
    servers = {{n: sv.pid for n, sv in lc.servers().items()}} if lc is not None else {{}}
    try:
        from ramabana.display import ledger_rows
        keep = ('model', 'purpose', 'status', 'prompt_tokens', 'cached_tokens', 'completion_tokens', 'ttft_ms', 'total_ms', 'error')
        ledger = [{{k: r.get(k) for k in keep}} for r in ledger_rows(10)]
    # the ledger is a cross-check only: a ledger that cannot be read is recorded, it does not lose the turn
    except Exception as e: ledger = f'{{type(e).__name__}}: {{e}}'
    out = dict(answer=last.answer if last else None, error=last.error if last else None,
               cancelled=last.cancelled if last else None, model=a.spec.name if a is not None else None,
               calls=calls, results=results, cells_shown=shown, servers=servers, ledger=ledger, sources=sources,
               schemas=[t.schema for t in a.tools] if a is not None else [], status=s.status() if a is not None else None)
    print({MARK!r} + json.dumps(out, default=repr) + {MARK!r})
__agent_tasks_dump(); del __agent_tasks_dump'''

# ------------------------------------------------------------------------------------------------------ the kernel
def marked(ex:Execution):
    "The JSON a helper cell printed between the markers."
    m = re.search(re.escape(MARK) + '(.*?)' + re.escape(MARK), ex.stdout(), re.S)
    if not m: raise TaskFailed(f'a helper cell printed nothing for the harness: {clip(ex.error or ex.stderr() or ex.stdout(), 300)}')
    try: return json.loads(m.group(1))
    except ValueError as e: raise TaskFailed(f'a helper cell printed what is not JSON ({e}): {clip(m.group(1), 200)}') from None

class Kernel(kernel.Kernel):
    "`ramabana.kernel`'s driver as the harness uses it: helper cells without history, its failures the task's (`TaskFailed`), Ctrl-C raised, and the llama-servers it left stopped."
    def __init__(self, env:dict, cwd:Path, log:Path):
        super().__init__(cwd, env, log, stop_wait=20)   # time for the kernel's atexit to stop its llama-server before it is killed

    def start(self, timeout:float=60):
        "Start the kernel and wait until it answers."
        self.startup = timeout
        try: return super().start()
        except kernel.KernelError as e: raise TaskFailed(str(e)) from None

    def run(self, code:str, timeout:float, history:bool=False, cell_id:str|None=None) -> Execution:
        "Run one cell; past `timeout` the kernel is interrupted and given 30 s more; Ctrl-C interrupts it and is raised."
        try: ex = super().run(code, timeout, cell_id, history=history, stop_on_error=False, grace=30, ctrl_c='raise')
        except kernel.KernelError as e: raise TaskFailed(str(e)) from None   # it died under the cell
        if ex.timed_out and ex.idle is None: raise TaskFailed(f'the kernel did not stop within 30 s of an interrupt (after {timeout:g} s)')
        return ex

    def shutdown(self):
        "Stop the kernel (its atexit stops the llama-servers it started), then any of those it left running; safe to call twice."
        with no_interrupts():   # a second Ctrl-C here would leave a kernel and its llama-server running
            owner, self.pid = self.pid, None
            super().shutdown()
            if owner is not None: stop_left_servers(owner)

def stop_left_servers(owner:int):
    "End the llama-servers kernel `owner` started and left running (it was killed before its atexit ran), by their pid files."
    from ramabana.core import cache_dir   # the same folder the kernel wrote them in: the environment passes through
    for pidf in (cache_dir()/'run').glob('*.json'):
        try: rec = json.loads(pidf.read_text())
        except (OSError, ValueError): continue   # a pid file being written or removed: not one of ours to judge
        if not isinstance(rec, dict) or rec.get('owner') != owner or not is_llama_server(rec.get('pid')): continue
        os.kill(rec['pid'], signal.SIGTERM)
        for _ in range(50):
            if not is_llama_server(rec['pid']): break
            time.sleep(0.1)
        else: os.kill(rec['pid'], signal.SIGKILL)
        pidf.unlink(missing_ok=True)

def is_llama_server(pid) -> bool:
    "Whether `pid` is a live llama-server (a pid reused by another program since is not)."
    if not isinstance(pid, int): return False
    try: cmd, stat = Path(f'/proc/{pid}/cmdline').read_bytes(), Path(f'/proc/{pid}/stat').read_text()
    except OSError: return False   # gone
    return b'llama-server' in cmd and stat.rsplit(')', 1)[-1].split()[0] != 'Z'   # a zombie has ended already

# ------------------------------------------------------------------------------------------------------ one task
def notebook_json(cells:list[dict]) -> dict:
    "An nbformat 4.5 notebook of `cells` (dicts with id, type, source, outputs, count)."
    def one(c):
        if c['type'] == 'markdown': return dict(id=c['id'], cell_type='markdown', metadata={}, source=c['source'])
        return dict(id=c['id'], cell_type='code', metadata={}, source=c['source'], outputs=c['outputs'], execution_count=c['count'])
    return dict(cells=[one(c) for c in cells], metadata={'kernelspec': {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}},
                nbformat=4, nbformat_minor=5)

def saved_outputs(ex:Execution) -> list[dict]:
    "A cell's iopub outputs as nbformat outputs, as Jupyter would save them."
    outs = []
    for _, m in ex.msgs:
        kind, c = m['header']['msg_type'], m['content']
        if kind == 'stream': outs.append(dict(output_type='stream', name=c['name'], text=c['text']))
        elif kind == 'execute_result': outs.append(dict(output_type='execute_result', data=c['data'], metadata=c.get('metadata', {}), execution_count=c['execution_count']))
        elif kind == 'display_data': outs.append(dict(output_type='display_data', data=c['data'], metadata=c.get('metadata', {})))
        elif kind == 'error': outs.append(dict(output_type='error', ename=c['ename'], evalue=c['evalue'], traceback=c['traceback']))
    return outs

def ask_cell(task:Task, model:str) -> str:
    "The `%%ram` cell: with the notebook when the task has one, `--no-notebook` otherwise."
    import shlex
    return f"%%ram -m {shlex.quote(model)}{'' if task.cells else ' --no-notebook'}\n{task.question}"

def build_notebook(k:Kernel, task:Task, path:Path, question_cell:str) -> None:
    "Run the task's cells in the kernel as a user would (with history and cell ids) and save them, outputs included, with the asking cell last."
    cells = []
    for i, src in enumerate(task.cells):
        cid = f'c{i:02d}'
        if src.startswith('#md '): cells.append(dict(id=cid, type='markdown', source=src[4:])); continue
        ex = k.run(src, 60, history=True, cell_id=cid)
        if ex.timed_out: raise TaskFailed(f'notebook cell {cid} did not finish: {ex.error}')
        cells.append(dict(id=cid, type='code', source=src, outputs=saved_outputs(ex), count=ex.count()))
    cells.append(dict(id='ask', type='code', source=question_cell, outputs=[], count=None))
    path.write_text(json.dumps(notebook_json(cells), indent=1))

def in_kernel(k:Kernel, code:str, out:str, what:str, given:dict|None=None, timeout:float=60):
    "Run task code on a copy of the namespace and return the variable `out`; `TaskFailed` naming `what` when it raises."
    res = marked(k.run(namespace_cell(code, out, given), timeout))
    if not res['ok']: raise TaskFailed(f'{what} failed in the kernel: {res["error"]}')
    return res['value']

def first_answer_time(ex:Execution) -> tuple[float|None, float|None]:
    "Seconds from sending the cell to the first answer text, and to the first answer text or tool line."
    first_text = first_any = None
    for t, m in ex.msgs:
        if m['header']['msg_type'] not in ('display_data', 'update_display_data'): continue
        kind = (m['content'].get('metadata') or {}).get('ramabana')
        text = (m['content'].get('data') or {}).get('text/plain', '')
        if kind in ('answer', 'tool') and text.strip() and first_any is None: first_any = t - ex.sent
        if kind == 'answer' and text.strip(): first_text = t - ex.sent; break
    return first_text, first_any

def task_env(args, where:Path, nb:Path|None) -> dict:
    "The kernel's environment: ours passed through, private data and task folders, the config asked for, the open notebook."
    env = dict(os.environ)
    env.pop('JPY_SESSION_NAME', None)    # a notebook the harness itself runs under is not the task's
    env.pop('RAMABANA_SAVE_HOOK', None)  # no Jupyter server saves these notebooks: the file is what the kernel reads
    env.update(RAMABANA_DATA_DIR=str(where/'data'), RAMABANA_TASK_DIR=str(where/'tasks'))
    if args.config: env['RAMABANA_CONFIG'] = str(Path(args.config).resolve())
    if args.cold: env['RAMABANA_AGENT_WARM'] = 'false'   # nothing started before the question, as with agent.warm off
    if nb is not None: env['JPY_SESSION_NAME'] = str(nb)
    return env

def set_up(k:Kernel, task:Task, nb:Path|None, question:str):
    "Start the kernel, make the task's state (hidden code, then the notebook's cells), and return the truth computed there."
    k.start()
    if task.needs and (gone := missing_packages(k, task.needs)): raise TaskFailed(no_packages(gone))
    if task.hidden:
        ex = k.run(task.hidden, 60)
        if ex.error: raise TaskFailed(f'the hidden setup failed: {ex.error}')
    if nb is not None: build_notebook(k, task, nb, question)
    return in_kernel(k, task.truth, 'truth', 'the truth code')

def missing_packages(k:Kernel, names) -> list[str]:
    "The packages of `names` the kernel cannot import."
    code = f"import importlib.util, json\nprint({MARK!r} + json.dumps([n for n in {list(names)!r} if importlib.util.find_spec(n) is None]) + {MARK!r})"
    return marked(k.run(code, 60))

def no_packages(gone:list[str]) -> str:
    return (f"the eval's kernel has no {', '.join(gone)} (the DataFrame tasks need pandas, numpy and matplotlib): install "
            f"the `data` extra (pip install -e '.[data]'), or `.venv/bin/pip install pandas numpy matplotlib`; or leave them out with -k")

def verify(k:Kernel, task:Task, truth) -> dict:
    "The task's verify code run in the kernel after the turn: {ok, detail}; the model's code raising, or a name it never defined, is a no."
    try: return in_kernel(k, task.verify, 'result', 'verify', {'truth': truth}, timeout=30)
    except TaskFailed as e: return {'ok': False, 'detail': str(e)}

def ideal_answer(truth) -> str:
    "An answer a perfect model might give for `truth`, for `--self-test`."
    if isinstance(truth, dict): return f"It is {truth['answer'][0] if isinstance(truth['answer'], list) else truth['answer']}."
    if isinstance(truth, list): return 'It is ' + ', '.join(t[0] if isinstance(t, list) else str(t) for t in truth) + '.'
    return f'The answer is **{truth:,}**.' if isinstance(truth, (int, float)) else f'It is `{truth}`.'

def self_test(task:Task, args, root:Path) -> dict:
    "Without a model: set the task up, then check that a right answer (the solution, for code) passes and a wrong one fails."
    where = root/'self-test'/task.name
    where.mkdir(parents=True, exist_ok=True)
    nb = where/'analysis.ipynb' if task.cells else None
    k, rec = Kernel(task_env(args, where, nb), where, where/'kernel.log'), dict(task=task.name, ok=False, why='')
    try:
        rec['truth'] = truth = set_up(k, task, nb, ask_cell(task, 'MODEL'))
        if task.verify:
            before = verify(k, task, truth)   # nothing defined yet: a NameError, a no
            ex = k.run(task.solution, 30)
            if ex.error: raise TaskFailed(f'the solution failed: {ex.error}')
            after = verify(k, task, truth)
            rec['ok'] = bool(after.get('ok')) and not before.get('ok')
            rec['why'] = f"before the solution: {clip(str(before.get('detail')), 80)}; after: {clip(str(after.get('detail')), 120)}"
        else:
            good, why = task.check(ideal_answer(truth), truth, None)
            bad = task.check('I could not find it; maybe 1 or 2.', truth, None)[0]
            rec['ok'], rec['why'] = good and not bad, f'ideal answer {ideal_answer(truth)!r}: {good} {why}; a wrong one passed: {bad}'
    except TaskFailed as e: rec['why'] = str(e)
    finally: k.shutdown()
    return rec

def run_task(task:Task, model:str, args, root:Path) -> dict:
    "Set the task up in a fresh kernel, ask it, check it; a record of what happened, failures included."
    where = root/re.sub(r'[^\w.-]', '_', model)/task.name
    where.mkdir(parents=True, exist_ok=True)
    nb = where/'analysis.ipynb' if task.cells else None
    rec = dict(task=task.name, kind=task.kind, needs_tool=task.needs_tool, model=model, solved=False, why='',
               calls=[], valid=0, fabricated=None, first_s=None, first_event_s=None, total_s=None, load_s=None, workdir=str(where))
    k = Kernel(task_env(args, where, nb), where, where/'kernel.log')
    try:
        question = ask_cell(task, model)
        rec['truth'] = truth = set_up(k, task, nb, question)
        for line in ('%load_ext ramabana', '%ram approve auto'):
            ex = k.run(line, 60, history=True)
            if ex.error or 'ramabana:' in ex.stderr(): raise TaskFailed(f'{line}: {ex.error or ex.stderr().strip()}')
        if not args.cold:
            ex = k.run(warm_cell(model), args.timeout)
            rec['load_s'] = round(time.monotonic() - ex.sent, 2)
            if ex.timed_out or ex.error: raise TaskFailed(f'starting the model failed: {ex.error}')
            rec['warm_pid'] = marked(ex)['pid']
        ex = k.run(question, args.timeout, history=True, cell_id='ask' if nb is not None else None)
        rec['total_s'] = round((ex.idle or time.monotonic()) - ex.sent, 2)
        first, rec['first_event_s'] = first_answer_time(ex)
        rec['first_s'] = None if first is None else round(first, 2)
        if rec['first_event_s'] is not None: rec['first_event_s'] = round(rec['first_event_s'], 2)
        rec['stderr'] = ex.stderr()
        turn = marked(k.run(dump_cell(), 60))
        rec.update(answer=turn['answer'] or '', turn_error=turn['error'], calls=turn['calls'], results=turn['results'],
                   cells_shown=turn['cells_shown'], servers=turn['servers'], ledger=turn['ledger'], status=turn['status'],
                   sources=turn['sources'], runs=code_runs(turn['calls'], turn['results']))
        # judged on turns that ended: an answer cut by a turn error or a timeout can end in half a number
        ended = not (ex.timed_out or turn['error']) and turn['answer'] is not None
        rec['fabricated'] = turn_fabricated(rec, task.question, years_in(where)) if ended else None
        rec['notice'] = notice_in(rec['answer'])
        problems = [call_problem(c, turn['schemas']) for c in turn['calls']]
        rec['valid'] = problems.count(None)
        rec['invalid'] = [[c.get('name'), p] for c, p in zip(turn['calls'], problems) if p]
        rec['text_calls'] = text_calls(rec['answer'])
        if ex.timed_out: raise TaskFailed(f'timeout: no end within {args.timeout:g} s')
        if turn['error']: raise TaskFailed(f"turn error: {turn['error']}")
        if turn['answer'] is None:   # the magic refused before any turn (an unknown model, a bad flag): its stderr says why
            raise TaskFailed(f"no turn: {clip(' '.join(ex.stderr().split()), 200) or ex.error or 'nothing said'}")
        rec['verified'] = verified = verify(k, task, truth) if task.verify else None
        rec['solved'], rec['why'] = task.check(without_code(rec['answer']), truth, verified)
        if not rec['solved'] and rec['text_calls']:   # the likeliest cause, worth seeing in the table
            rec['why'] = f"wrote a tool call as text ({', '.join(rec['text_calls'])}); {rec['why']}"
    except TaskFailed as e: rec['why'] = str(e)
    # a bug of the harness itself (or a kernel failing in a way not foreseen) must cost one task, not the whole run:
    # it is recorded with its traceback as the task's reason, never dropped
    except Exception as e:
        import traceback
        rec['why'], rec['traceback'] = f'harness error: {type(e).__name__}: {e}', traceback.format_exc()
    finally:
        k.shutdown()
    return rec

# ------------------------------------------------------------------------------------------------------ fabricated
# An answer "fabricated" output when it shows a number no execution of this turn produced, or claims to have run code
# when no code ran. The sources are what the model was given or made the kernel produce in this turn, read from the
# agent's history in the kernel after the turn: the question and every user message (the notebook's cells and outputs
# shown), the arguments of every tool call (the code the agent ran) and every tool result (the runs' outputs). The
# model's own text (the answer, and any text it wrote between calls) is never a source.
_SOURCE_NUMBER = re.compile(r'(?<![\w.])-?(?:\d{1,3}(?:[,_]\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?')
_CLAIM = re.compile(r"\bI(?: have|'ve)? (?:ran|run|executed)\b|\bthe output (?:is|was|shows|will be)\b|^\s*output\s*:|"
                    r"\b(?:running|executing) (?:this|that|it|the (?:above )?code)\b[^.\n]{0,40}\b(?:gives|shows|prints|outputs|returns|produces)\b",
                    re.I | re.M)
_FENCE = re.compile(r'```([^\n`]*)\n?(.*?)(?:```|\Z)', re.S)
_OUTPUT_INFO = ('text', 'output', 'console')
_CUT_OUTPUT = re.compile(r'… \d[\d,]* more lines?')   # a fence the agent writes a run's output in (`shown_output`), never code

def fenced_code(m) -> str|None:
    "The code of a fence `_FENCE` matched; None for an output block (```text) or one that is not code."
    return None if m.group(1).strip().lower() in _OUTPUT_INFO or not is_code(m.group(2)) else m.group(2)
_INLINE = re.compile(r'`([^`\n]+)`')

def source_numbers(text:str) -> list[float]:
    "Every number in a source text, read leniently: 1,234.5, 1_234, 1.5e+03; '1,234' in a list is also 1 and 234."
    found = []
    for m in _SOURCE_NUMBER.finditer(text or ''):
        s = m.group()
        try: found.append(float(s.replace(',', '').replace('_', '')))
        except ValueError: continue
        if ',' in s: found += [float(p) for p in re.findall(r'\d+(?:\.\d+)?', s)]
    return found

def is_code(text:str) -> bool:
    "Whether a fenced or inline span of an answer is code (Python that is not a bare literal), not an output shown as one."
    import ast
    try: ast.parse(text.strip())
    except (SyntaxError, ValueError): return False
    try: ast.literal_eval(text.strip()); return False   # 200, {'widget': 1230.0}: an output, not code
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError): return True

def prose(answer:str) -> str:
    "The answer less its code (fenced blocks and inline spans that are code); output blocks stay."
    answer = _FENCE.sub(lambda m: ' ' if fenced_code(m) is not None else '\n' + m.group(2) + '\n', answer or '')
    return _INLINE.sub(lambda m: ' ' if is_code(m.group(1)) else m.group(1), answer)

def seen_number(w:float, places:int, sources:list[float]) -> bool:
    "`w` (written with `places` decimals) is a source number, or one rounded to those places (sign aside)."
    tol = 0.5 * 10**-places + 1e-9
    return any(abs(abs(w) - abs(s)) <= tol + 1e-9 * abs(s) for s in sources)

def norm_code(code:str) -> str: return ' '.join(code.split())

def was_run(block:str, ran:list[str]) -> bool:
    "Whether a code block an answer shows is (nearly: within 20%, or inside one another) code that ran in the turn."
    import difflib
    b = norm_code(block)
    return any(b in (c := norm_code(r)) or c in b or difflib.SequenceMatcher(None, b, c).ratio() >= 0.8 for r in ran)

def fabricated(answer:str, sources:list[str], ran:list[str], years:set[int]=frozenset()) -> dict:
    """What of `answer` no execution of the turn produced: {'numbers': [...], 'claim': phrase or None, 'fabricated': bool}.

    A number counts when it is written outside code (a fenced block or inline span that parses as Python and is not a
    bare literal is code; an output block is not), is not an integer from -10 to 10, is not a year (an integer 1900-2100
    in `years` or in the sources), and matches no number of `sources` (the same, or a source rounded to the decimals it
    is written with: 1532.04 ≈ '1,532' ≈ '1532.0'; sign aside; 'N%' also matches a source N/100). A claim counts when
    the answer says it ran code or shows its output ("I ran", "the output is", "Output:", "running this gives") and
    either no code ran in the turn (`ran`: the code of the runs that ran) or a fenced code block of the answer is none
    of that code (nor within 20% of one, nor inside one)."""
    nums = [n for t in sources for n in source_numbers(t)]
    # the cell cuts a long output to its first lines and says how many more (`codeacts.shown_output`): the agent's count
    text, bad = _CUT_OUTPUT.sub(' ', prose(answer)), []
    for m in _SOURCE_NUMBER.finditer(text):
        s = m.group().replace(',', '').replace('_', '')
        mant, _, exp = s.lower().partition('e')
        w = float(s)
        places = max(0, (len(mant.split('.')[1]) if '.' in mant else 0) - int(exp or 0))
        if places == 0 and (abs(w) <= 10 or (1900 <= w <= 2100 and (int(w) in years or w in nums))): continue
        pct = re.match(r'\s*(?:%|percent)', text[m.end():])
        if seen_number(w, places, nums) or (pct and seen_number(w / 100, places + 2, nums)): continue
        bad.append(m.group())
    claim = m.group() if (m := _CLAIM.search(answer or '')) else None
    if claim and ran:   # code ran: the claim is false only about a block shown as run that did not run
        shown = [b for m in _FENCE.finditer(answer or '') if (b := fenced_code(m)) is not None and b.strip()]
        claim = next((f'{claim} … {clip(norm_code(b), 50)}' for b in shown if not was_run(b, ran)), None)
    return dict(numbers=bad, claim=claim, fabricated=bool(bad or claim))

_NOT_RUN = re.compile(r'did not run|^error: not run', re.I | re.M)

def code_runs(calls:list[dict], results:list[dict]) -> list[dict]:
    """The code of this turn's tool calls that carry code (an argument `code`: run_python), each with whether it ran.

    A call ran unless its result says it did not (declined, switched off, over the turn's budget, refused as
    overwriting the user's data: the agent's notes say "did not run" or "error: not run")."""
    out = {r.get('id'): r for r in results}
    runs = []
    for c in calls:
        try: args = json.loads(c.get('arguments')) if isinstance(c.get('arguments'), str) else c.get('arguments')
        except ValueError: continue
        if not isinstance(args, dict) or not isinstance(args.get('code'), str): continue
        res = out.get(c.get('id')) or {}
        head = res.get('head') or res.get('content') or ''
        runs.append(dict(name=c.get('name'), code=args['code'], ran=bool(res) and not _NOT_RUN.search(head[:300])))
    return runs

_NOTICE = re.compile(r'</?(?:system-reminder|notebook-changes|context-compacted|notebook)\b[^>]*>')

def notice_in(answer:str) -> str|None:
    "The first tag of the agent's own notices and context blocks shown in an answer (`<system-reminder>`), or None."
    return m.group() if (m := _NOTICE.search(answer or '')) else None

def turn_fabricated(rec:dict, question:str, years:set[int]) -> dict:
    "`fabricated` for one task's turn as the dump read it from the kernel (its sources and runs)."
    ran = [r['code'] for r in rec.get('runs') or [] if r.get('ran')]
    return fabricated(rec.get('answer') or '', [question] + list(rec.get('sources') or []), ran, years)

def years_in(where:Path) -> set[int]:
    "The years (1900-2100) written in the task's data files: an answer may name them without having computed them."
    ys = set()
    for p in list(where.glob('*.csv')):
        try: ys |= {int(y) for y in re.findall(r'(?<!\d)(19\d\d|20\d\d|2100)(?!\d)', p.read_text(errors='replace')[:2_000_000])}
        except OSError: continue
    return ys

# (answer, sources, the code that ran, fabricated?): --self-test proves the definition on these before any task
RAN = ["print(df[df['revenue'] > 100].shape[0])"]
FABRICATION_CASES = [
    ('The total is **1,532**.', ['1532.0'], RAN, False),
    ('The total is 1532.00 (rounded).', ['Name: revenue, dtype: float64\n1532.004'], RAN, False),
    ('The mean is 17.63.', ['17.625'], RAN, False),
    ('The mean is 17.6.', ['the mean of [17.5, 3.25]'], RAN, True),
    ("I ran the following code:\n```python\nprint(df[df['revenue'] > 100].shape[0])\n```\nThe output is: 200.", ['How many rows of df have revenue above 100?'], [], True),
    ("I ran `df.groupby('product').units.sum()`:\n```\n{'widget': 1230.0, 'gadget': 1980.0}\n```", ["{'widget': 1420, 'gadget': 1357}"], RAN, True),
    ("```python\ndf.groupby('product')['units'].sum().nlargest(3)\n```\nwidget sold the most: 1420 units.", ['widget    1420\ngadget    1357'], RAN, False),
    ('It is 23.4% of the rows.', ['0.234'], RAN, False),
    ('In March 2024 the west region led, with 3 of the 4 best days.', ['Which region had the highest total revenue in March 2024?', 'west'], RAN, False),
    ('The output is `west`.', ['west'], [], True),
    ('The answer is 135.', ['135'], [], False),
    ('The answer is 1.35e+02.', ['135'], RAN, False),
    ('Revenue was 2,631.65 in the first row.', ['1.5e+03'], RAN, True),
    ("I ran this:\n```python\nprint(df[df['revenue'] > 100].shape[0])\n```\nOutput: 135", ['135'], RAN, False),
    ("I ran this:\n```python\ndf.groupby('region')['revenue'].sum().idxmax()\n```\nThe output is west.", ['west'], RAN, True),
    # the agent's own output block under a block that ran: ```text is output, though `result: [...]` parses as Python
    ("Fix it:\n```python\nnames.append('cy')\nnames\n```\n```text\nresult: ['ana', 'bo', 'cy']\n```\nThe output shows 3 names.",
     ["result: ['ana', 'bo', 'cy']"], ["names.append('cy')\nnames"], False),
    # a long output cut in the cell ("… 43 more lines") is the agent's count of what it left out, not a number stated
    ("```python\nrows.sort()\n```\n```text\nerror:\nTraceback\n… 43 more lines\n```\n[stopped]", ['error:\nTraceback'], ['rows.sort()'], False),
]

def fabrication_self_test() -> list[str]:
    "The cases above that `fabricated` judges wrongly (none when the definition holds)."
    return [f'{a!r}: wanted {want}, got {got}' for a, src, ran, want in FABRICATION_CASES
            if (got := fabricated(a, src, ran, {2024})['fabricated']) != want]

# ------------------------------------------------------------------------------------------------ tool-call check
_TEXT_CALL = re.compile(r'"name"\s*:\s*"([^"]+)"\s*,\s*"(?:arguments|parameters)"\s*:')

def text_calls(answer:str) -> list[str]:
    "Names of tool calls the model wrote in its answer's text (JSON with name and arguments) instead of making them."
    return _TEXT_CALL.findall(answer or '')

_JSON_TYPES = {'string': (str,), 'integer': (int,), 'number': (int, float), 'boolean': (bool,), 'array': (list,), 'object': (dict,), 'null': (type(None),)}

def call_problem(call:dict, schemas:list[dict]) -> str|None:
    "Why a tool call is not valid (unknown tool, arguments not a JSON object matching its parameters), or None."
    tools = {s['function']['name']: s['function'].get('parameters') or {} for s in schemas}
    name, raw = call.get('name'), call.get('arguments')
    if name not in tools: return f'no tool called {name!r}'
    try: args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as e: return f'arguments are not JSON: {e}'
    if not isinstance(args, dict): return 'arguments are not a JSON object'
    props, required = tools[name].get('properties') or {}, tools[name].get('required') or []
    if missing := [r for r in required if r not in args]: return f'missing {", ".join(missing)}'
    if extra := [a for a in args if a not in props]: return f'unknown {", ".join(extra)}'
    for a, v in args.items():
        kinds = props[a].get('type')
        kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
        ok = [t for k in kinds for t in _JSON_TYPES.get(k, (object,))]
        if ok and (not isinstance(v, tuple(ok)) or (isinstance(v, bool) and bool not in ok)):
            return f'{a} is {type(v).__name__}, not {"/".join(kinds)}'
    return None

# ---------------------------------------------------------------------------------------------------------- report
def seconds(x) -> str: return '-' if x is None else f'{x:.1f}'

DATAFRAME_KINDS = ('frame', 'frame-edit', 'frame-error', 'plot')

def fab_cell(r:dict) -> str:
    "The table's `fabricated` cell: yes with the numbers no run produced (or the claim), no, or '-' when no answer came."
    f = r.get('fabricated')
    if not f: return '-'
    if not f['fabricated']: return 'no'
    return clip('yes: ' + ', '.join(f['numbers'][:4] + ([repr(f['claim'])] if f['claim'] else [])), 40).replace('|', '/')

def table(recs:list[dict]) -> str:
    "The Markdown table of one model's tasks."
    head = ('| task | kind | tool? | solved | fabricated | calls | valid | first s | total s | why not |\n'
            '|---|---|---|---|---|---|---|---|---|---|')
    rows = [f"| {r['task']} | {r['kind']} | {'yes' if r['needs_tool'] else 'no'} | {'yes' if r['solved'] else 'no'} | {fab_cell(r)} | "
            f"{len(r['calls'])} | {r['valid']} | {seconds(r['first_s'])} | {seconds(r['total_s'])} | "
            f"{clip(' '.join(r['why'].split()), 90).replace('|', '/') if not r['solved'] else ''} |" for r in recs]
    return '\n'.join([head, *rows])

def tally(recs:list[dict]) -> dict:
    "Tasks, solved and fabricated answers among `recs`."
    return dict(tasks=len(recs), solved=sum(r['solved'] for r in recs),
                fabricated=sum(bool((r.get('fabricated') or {}).get('fabricated')) for r in recs))

def by_kind(recs:list[dict]) -> dict:
    "The tally per kind, then for the DataFrame kinds together and for all."
    out = {k: tally([r for r in recs if r['kind'] == k]) for k in dict.fromkeys(r['kind'] for r in recs)}
    frames = [r for r in recs if r['kind'] in DATAFRAME_KINDS]
    if frames: out['DataFrame kinds'] = tally(frames)
    out['all'] = tally(recs)
    return out

def kind_table(kinds:dict) -> str:
    "The Markdown table of `by_kind`."
    pct = lambda a, b: f'{a}/{b} ({round(100 * a / b)}%)' if b else '-'
    rows = [f"| {k} | {t['tasks']} | {pct(t['solved'], t['tasks'])} | {t['fabricated']} |" for k, t in kinds.items()]
    return '\n'.join(['| kind | tasks | solved | fabricated |', '|---|---|---|---|', *rows])

def summary(model:str, recs:list[dict]) -> dict:
    "Solved, fabricated, the share of tool-needing tasks with calls made and all valid, median times, the tally by kind."
    needed = [r for r in recs if r['needs_tool']]
    good = [r for r in needed if r['calls'] and r['valid'] == len(r['calls'])]
    med = lambda k: (statistics.median(v) if (v := [r[k] for r in recs if r[k] is not None]) else None)
    return dict(model=model, solved=sum(r['solved'] for r in recs), tasks=len(recs), tool_tasks=len(needed),
                fabricated=tally(recs)['fabricated'], notices=sum(bool(r.get('notice')) for r in recs), tool_ok=len(good),
                tool_ok_pct=round(100 * len(good) / len(needed)) if needed else None,
                median_first_s=med('first_s'), median_total_s=med('total_s'), by_kind=by_kind(recs))

def summary_line(s:dict) -> str:
    pct = '-' if s['tool_ok_pct'] is None else f"{s['tool_ok_pct']}% ({s['tool_ok']}/{s['tool_tasks']})"
    frames = s['by_kind'].get('DataFrame kinds')
    df = f" · DataFrame kinds solved {frames['solved']}/{frames['tasks']}" if frames else ''
    return (f"**{s['model']}**: solved {s['solved']}/{s['tasks']}{df} · fabricated {s['fabricated']} of {s['tasks']} (goal 0) · "
            f"notices in answers {s['notices']} · "
            f"needed tool calls made and valid {pct} · "
            f"median first token {seconds(s['median_first_s'])} s · median total {seconds(s['median_total_s'])} s")

def save(path:Path, data:dict):
    "Write the results through a temporary file, so an interrupted run leaves the last whole file."
    tmp = path.with_suffix(path.suffix + '.tmp')
    tmp.write_text(json.dumps(data, indent=1, default=repr))
    os.replace(tmp, path)

# ------------------------------------------------------------------------------------------------------------ main
def chosen(tasks:list[Task], args) -> list[Task]:
    "The tasks `-k` names (any part of a name) and `--tasks` keeps (the first N)."
    if args.k: tasks = [t for t in tasks if any(k in t.name for k in args.k)]
    return tasks[:args.tasks] if args.tasks else tasks

def parse(argv=None):
    p = argparse.ArgumentParser(description='Everyday notebook tasks for the agent, in real kernels, checked against the kernel.')
    p.add_argument('--model', action='append', help='a model to test (repeat for more); e.g. smollm2')
    p.add_argument('--tasks', type=int, help='run only the first N tasks (the kinds alternate)')
    p.add_argument('-k', action='append', metavar='NAME', help='run the tasks whose name contains NAME (repeatable)')
    p.add_argument('--timeout', type=float, default=300, help='seconds one question may take (default 300)')
    p.add_argument('--out', type=Path, help="the raw results as JSON (default: results.json in the run's folder)")
    p.add_argument('--config', help='a ramabana config.toml for the kernels (sets RAMABANA_CONFIG)')
    p.add_argument('--cold', action='store_true', help='do not start the model before the question: first-token time includes loading it')
    p.add_argument('--list', action='store_true', help='list the tasks and exit')
    p.add_argument('--self-test', action='store_true',
                   help='no model: set each task up in a kernel and check that a right answer passes and a wrong one fails')
    a = p.parse_args(argv)
    if not (a.list or a.self_test or a.model): p.error('give --model at least once (or --list, --self-test)')
    if a.config and not Path(a.config).is_file(): p.error(f'no config file at {a.config}')
    if a.timeout <= 0: p.error('--timeout should be above 0')
    return a

def kernel_lacks(tasks:list[Task], args, root:Path) -> list[str]:
    "The packages the chosen tasks need that a kernel like theirs cannot import (one kernel started to ask; none when no task needs any)."
    needs = list(dict.fromkeys(n for t in tasks for n in t.needs))
    if not needs: return []
    where = root/'packages'
    where.mkdir(parents=True, exist_ok=True)
    k = Kernel(task_env(args, where, None), where, where/'kernel.log')
    try: return missing_packages(k.start(), needs)
    finally: k.shutdown()

def main(argv=None) -> int:
    args = parse(argv)
    tasks = chosen(all_tasks(), args)
    if args.list:
        for t in tasks: print(f"{t.name:26} {t.kind:11} {'needs a tool' if t.needs_tool else 'no tool needed'}")
        return 0
    if not tasks: print('no task matches', file=sys.stderr); return 2
    root = Path(tempfile.mkdtemp(prefix='agent_tasks-'))
    if gone := kernel_lacks(tasks, args, root):   # before any model is started: one clear line, not a failure a task
        print(f'agent_tasks: {no_packages(gone)}', file=sys.stderr)
        return 2
    if args.self_test:
        wrong = fabrication_self_test()
        print(f"{'ok  ' if not wrong else 'FAIL'} fabricated: {len(FABRICATION_CASES) - len(wrong)} of {len(FABRICATION_CASES)} cases judged as defined"
              + ''.join(f'\n     {w}' for w in wrong))
        recs = [self_test(t, args, root) for t in tasks]
        for r in recs: print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['task']:26} truth={clip(json.dumps(r.get('truth'), default=repr), 60)}  {r['why']}")
        return 0 if all(r['ok'] for r in recs) and not wrong else 1
    out = args.out or root/'results.json'
    results = dict(started=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), args={k: str(v) for k, v in vars(args).items()},
                   workdir=str(root), models={})
    print(f'{len(tasks)} tasks × {len(args.model)} model(s); working folder {root}', file=sys.stderr)
    status = 0
    try:
        for model in args.model:
            recs = results['models'].setdefault(model, {'tasks': []})['tasks']
            for t in tasks:
                print(f'[{model}] {t.name} …', file=sys.stderr, flush=True)
                r = run_task(t, model, args, root)
                recs.append(r)
                print(f"[{model}] {t.name}: {'solved' if r['solved'] else 'not solved: ' + clip(r['why'], 120)}", file=sys.stderr, flush=True)
                save(out, results)
    except KeyboardInterrupt:
        print('\ninterrupted: reporting the tasks done so far', file=sys.stderr)
        status = 130
    for model, m in results['models'].items():
        if not m['tasks']: continue
        m['summary'] = summary(model, m['tasks'])
        print(f'\n### {model}\n\n{table(m["tasks"])}\n\n{kind_table(m["summary"]["by_kind"])}\n\n{summary_line(m["summary"])}')
    save(out, results)
    print(f'\nraw results: {out}')
    return status

if __name__ == '__main__': sys.exit(main())
