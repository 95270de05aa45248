"""Every benchmark in bench/ still starts: it imports what it needs, and one with options answers `--help`.

A benchmark is run by hand, rarely, and takes minutes, so nothing else notices when a change to the package breaks
one. These checks take seconds: each script is loaded the way `python bench/NAME.py` loads it (its folder first on
the path, `harness` among the modules there) but without running its `main`; the bench scripts import each other
without a cycle; and none reads a file from outside the repository.
"""
import ast, json, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT/'bench'
SCRIPTS = sorted(BENCH.glob('*.py'))
LOCAL = {p.stem for p in SCRIPTS}

def bench_imports(p:Path) -> set:
    "The bench scripts that `p` imports, at its top or inside a function."
    found = set()
    for node in ast.walk(ast.parse(p.read_text())):
        if isinstance(node, ast.Import): found |= {a.name for a in node.names if a.name in LOCAL}
        elif isinstance(node, ast.ImportFrom) and node.module in LOCAL and not node.level: found.add(node.module)
    return found

def test_there_are_benchmarks():
    assert len(SCRIPTS) > 10 and (BENCH/'harness.py').is_file()

LOAD_ALL = """
import json, runpy, sys, traceback
sys.path.insert(0, sys.argv[1])
failed = {}
for path in list(sys.argv[2:]):
    sys.argv = [path]   # as `python bench/NAME.py` with no arguments: some read theirs at the top
    try: runpy.run_path(path, run_name='bench_smoke')
    except BaseException: failed[path] = traceback.format_exc(limit=4)   # each script's own failure, reported below
print(json.dumps(failed))
"""

def test_loads():
    "Every script's module-level code runs, in one process (seconds, not one interpreter start a script): its imports resolve."
    r = subprocess.run([sys.executable, '-c', LOAD_ALL, str(BENCH), *map(str, SCRIPTS)], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    failed = json.loads(r.stdout.strip().splitlines()[-1])
    assert not failed, '\n'.join(f'{Path(k).name}:\n{v}' for k, v in failed.items())

@pytest.mark.parametrize('script', [p for p in SCRIPTS if 'argparse' in p.read_text()], ids=lambda p: p.name)
def test_help(script):
    "A script with options parses them: `--help` prints its usage and exits 0 without running anything."
    r = subprocess.run([sys.executable, str(script), '--help'], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and 'usage:' in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]

def test_no_import_cycle():
    "The bench scripts import each other one way: `harness` at the bottom, no two scripts through each other."
    graph = {p.stem: bench_imports(p) for p in SCRIPTS}
    def reach(start):
        seen, todo = set(), list(graph[start])
        while todo:
            n = todo.pop()
            if n not in seen: seen.add(n); todo += graph.get(n, ())
        return seen
    cycles = sorted(s for s in graph if s in reach(s))
    assert not cycles, cycles
    assert graph['harness'] == set()

def test_nothing_from_outside_the_repository():
    "No script reads a path above the checkout's root (as one once read LiteLLM's config from ../shared)."
    outside = [p.name for p in SCRIPTS if 'parent.parent.parent' in p.read_text() or "'../" in p.read_text()]
    assert not outside, outside

def test_no_private_names():
    "A benchmark uses the package as its users can: no `_name` of a ramabana module (it would break unseen when that moves)."
    from test_architecture import private_reaches
    found = [f for p in SCRIPTS for f in private_reaches(p)]
    assert not found, found

def test_fabricated_definition():
    "The agent eval's definition of a fabricated answer judges its own cases as its docstring says (no kernel, no model)."
    import runpy
    ns = runpy.run_path(str(BENCH/'agent_tasks.py'), run_name='bench_smoke')
    assert ns['fabrication_self_test']() == []

def test_checks_read_words_and_outputs():
    "The eval's checks judge an answer less its code: every month listed in the code that finds the missing one is no claim."
    import runpy
    ns = runpy.run_path(str(BENCH/'agent_tasks.py'), run_name='bench_smoke')
    months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
    truth = {'answer': ['Jul', 'July'], 'candidates': [[m] for m in months]}
    answer = (f"```python\nmonths = {months}\nprint([m for m in months if m not in sales])\n```\n"
              "```text\nstdout:\n['Jul']\n```\n\nJul is missing.")
    check, judged = ns['expect_missing'](), ns['without_code'](answer)
    assert 'Dec' not in judged and "['Jul']" in judged and judged.endswith('Jul is missing.')
    assert check(judged, truth, None) == (True, '') and not check(answer, truth, None)[0]
    assert ns['without_code']("```python\nx = 1") == ''   # a block left open runs to the end
