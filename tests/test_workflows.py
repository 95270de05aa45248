"""The GitHub workflows run only what exists: nbdev 3's commands and actions, and this repository's own scripts.

Each workflow's steps are read from .github/workflows/*.yaml. A `run:` script is split into its commands, and each must be
an nbdev command the installed nbdev provides, a script of this repository (`./dev` and its subcommand, `.ci/run`), or a
program on this machine. An action (`uses:`) must be one whose commands are known here, read from its action.yml, and
those commands are checked the same way: nbdev 2's actions run `nbdev_docs`, which nbdev 3 does not install.
"""
import re, shlex, shutil, subprocess, sys
from importlib.metadata import entry_points
from pathlib import Path
import pytest, yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT/'.github'/'workflows').glob('*.y*ml'))

# The actions the workflows may use: the commands each runs and the inputs it takes, from its action.yml
# (github.com/AnswerDotAI/workflows for nbdev's). The nbdev ones are what nbdev 3's migrate maps nbdev 2's to.
ACTIONS = {
    'actions/checkout': dict(runs=[], inputs=set()),
    'actions/setup-python': dict(runs=[], inputs={'python-version'}),
    'actions/cache': dict(runs=[], inputs={'path', 'key'}),
    'AnswerDotAI/workflows/quarto-ghp3': dict(runs=['python -m pip install --upgrade pip', 'pip install -e ".[dev]"', 'nbdev-docs'],
                                              inputs={'pre', 'version', 'ghtoken', 'publish_branch', 'torch_cpu'}),
    'AnswerDotAI/workflows/nbdev3-ci': dict(runs=['pip install -e ".[dev]"', 'nbdev-clean', 'nbdev-export', 'nbdev-test'],
                                            inputs={'pre', 'version', 'skip_test', 'flags', 'torch_cpu', 'skip_checkout', 'strip',
                                                    'uv', 'setup', 'test_args'}),
}

def steps() -> list[tuple[str, dict]]:
    "Every step of every workflow, named `file:job`."
    res = []
    for wf in WORKFLOWS:
        for job, j in yaml.safe_load(wf.read_text())['jobs'].items():
            res += [(f'{wf.name}:{job}', s) for s in j.get('steps', [])]
    return res

def commands(script:str) -> list[list[str]]:
    "The simple commands of a shell script, as words, without leading `VAR=value`; a `${{ }}` expression reads as X."
    script = re.sub(r'\$\{\{.*?\}\}', 'X', script)
    res = []
    for line in script.splitlines():
        for part in re.split(r'&&|\|\||;|\|', line):
            words = shlex.split(part, comments=True)
            while words and re.match(r'^[A-Za-z_]\w*=', words[0]): words.pop(0)
            if words: res.append(words)
    return res

def nbdev_commands() -> set[str]:
    "The commands the installed nbdev provides (its console scripts)."
    return {e.name for e in entry_points(group='console_scripts') if e.dist and e.dist.name == 'nbdev'}

def dev_subcommands() -> set[str]:
    "The subcommands `./dev` dispatches on."
    text = (ROOT/'dev').read_text()
    return set(re.findall(r'^\s+(\w+)\)', text[text.index('case "$cmd" in'):], re.M))

def missing(words:list[str]) -> str|None:
    "Why the command `words` would not run here, or None."
    cmd, args = words[0], words[1:]
    if cmd.startswith('nbdev'): return None if cmd in nbdev_commands() else f'{cmd} is not a command of nbdev {nbdev_version()}'
    if cmd == 'bash': cmd, args = args[0], args[1:]
    if '/' in cmd:
        p = ROOT/cmd
        if not p.is_file(): return f'{cmd} is not a file of this repository'
        if words[0] != 'bash' and not p.stat().st_mode & 0o111: return f'{cmd} is not executable'
        if p == ROOT/'dev':
            if not args or args[0] not in dev_subcommands(): return f'./dev has no subcommand {args[:1]}'
            opts = [a for a in args[1:] if a.startswith('--')]
            if unknown := [o for o in opts if not re.search(rf'^\s+{re.escape(o)}\)', (ROOT/'dev').read_text(), re.M)]:
                return f'./dev {args[0]} does not take {unknown}'
        return None
    if cmd in ('pip', 'python') and '.[dev]' in args:
        try: import tomllib
        except ImportError: import tomli as tomllib   # Python 3.10
        extras = tomllib.loads((ROOT/'pyproject.toml').read_text())['project'].get('optional-dependencies', {})
        return None if 'dev' in extras else 'pyproject.toml has no dev extra'
    return None if shutil.which(cmd) else f'{cmd} is not installed here'

def nbdev_version() -> str:
    from importlib.metadata import version
    return version('nbdev')

def test_workflows_found():
    assert {p.name for p in WORKFLOWS} >= {'test.yaml', 'deploy.yaml'}, WORKFLOWS

@pytest.mark.parametrize('where,step', steps(), ids=lambda x: x if isinstance(x, str) else (x.get('uses') or x.get('run', ''))[:40])
def test_step_runs_what_exists(where, step):
    "A step's commands (its own `run:`, or its action's) exist: nbdev's in the installed nbdev, the rest in the repo or here."
    if 'uses' in step:
        action = step['uses'].split('@')[0]
        assert action in ACTIONS, f'{where}: {action} is not an action whose commands are known here (nbdev 2 or unchecked)'
        known = ACTIONS[action]
        assert set(step.get('with') or {}) <= known['inputs'], f'{where}: {action} takes no {set(step["with"]) - known["inputs"]}'
        script = '\n'.join(known['runs'])
    else: script = step['run']
    cmds = commands(script)
    assert cmds or 'uses' in step, f'{where}: no command in {script!r}'
    assert not (bad := [f'{" ".join(w)}: {m}' for w in cmds if (m := missing(w))]), f'{where}: ' + '; '.join(bad)

def test_actions_are_nbdev3s():
    "The nbdev actions allowed here are the ones nbdev 3 itself maps nbdev 2's to (nbdev.migrate), and the deploy uses them."
    import inspect, nbdev.migrate
    src = inspect.getsource(nbdev.migrate)
    for a in (a for a in ACTIONS if a.startswith('AnswerDotAI/')): assert f"'{a}@'" in src, a
    deploy = [s.get('uses', '').split('@')[0] for w, s in steps() if w.startswith('deploy.yaml')]
    assert deploy == ['AnswerDotAI/workflows/quarto-ghp3'], deploy

def test_deploy_can_import_our_processors():
    "nbdev-docs runs pyproject.toml's `doc_procs` (tools/docs.py): the deploy puts the checkout on PYTHONPATH, and each imports."
    from nbdev.config import get_config, import_obj
    procs = get_config(ROOT).get('doc_procs', '').split()
    assert procs, 'no doc_procs in pyproject.toml'
    env = yaml.safe_load((ROOT/'.github'/'workflows'/'deploy.yaml').read_text())['jobs']['deploy'].get('env') or {}
    assert env.get('PYTHONPATH') == '${{ github.workspace }}', env
    code = f'import sys; sys.path.insert(0, {str(ROOT)!r}); from nbdev.config import import_obj; ' + \
           '; '.join(f'import_obj({p!r})' for p in procs)
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr

def test_commands_split_and_checked():
    "The checks themselves: assignments skipped, expressions read as words, a made-up command or subcommand named."
    assert commands('TZ=${{ matrix.tz }} ./dev test --clock ${{ matrix.clock }}  # a comment') == [['./dev', 'test', '--clock', 'X']]
    assert commands('set -ux\nnbdev-export && nbdev-test --flags "$F"') == [['set', '-ux'], ['nbdev-export'], ['nbdev-test', '--flags', '$F']]
    assert missing(['nbdev_docs']) and 'is not a command of nbdev' in missing(['nbdev_docs'])   # nbdev 2's spelling
    assert missing(['./dev', 'docs']) is None and 'no subcommand' in missing(['./dev', 'deploy'])
    assert 'does not take' in missing(['./dev', 'test', '--clocks', '1d'])
    assert 'not a file' in missing(['bash', '.ci/nothing'])
    assert missing(['pip', 'install', '-e', '.[dev]']) is None   # what nbdev's actions install
