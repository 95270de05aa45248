"""Agent clients nobody here wrote, pointed at the gateway: Claude Code (`claude -p`, headless) through the Messages door,
Codex CLI (`codex exec`) through the Responses door.

`./dev test` installs the pinned `@anthropic-ai/claude-code` and `@openai/codex` into the venv's `node/` when Node.js is
there; without Node.js these tests skip, saying so. Claude Code talks only to the gateway on 127.0.0.1 (telemetry, error reports, updates
and other traffic off; Codex with its model provider set to the gateway), which fronts a FakeLlamaServer with a window large enough for Claude Code's prompt.
"""
import json, os, shutil, subprocess, sys
from pathlib import Path
import pytest
from ramabana.core import ModelSpec
from ramabana.gateway import Gateway
from ramabana.app import GatewayServer
from ramabana.ledger import Ledger
from ramabana.llama_double import FakeLlamaServer, Reply, tool_call

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = Path(sys.prefix)/'node'/'node_modules'/'.bin'/'claude'   # the venv running the tests, where ./dev installs it
if not shutil.which('node'):
    pytest.skip('Node.js is not installed here, so Claude Code cannot run', allow_module_level=True)
if not CLAUDE.exists():
    pytest.skip(f'Claude Code is not installed at {CLAUDE}: ./dev test installs it (npm install --prefix VENV/node)', allow_module_level=True)

def run_claude(srv, prompt:str, cwd:Path, *args) -> dict:
    "One headless `claude -p` run against the gateway; its JSON result."
    env = {**os.environ, 'HOME': str(cwd/'home'), 'ANTHROPIC_BASE_URL': srv.url.removesuffix('/v1'), 'ANTHROPIC_API_KEY': 'sk-local',
           'ANTHROPIC_MODEL': 'local', 'ANTHROPIC_SMALL_FAST_MODEL': 'local', 'ANTHROPIC_DEFAULT_HAIKU_MODEL': 'local',
           'DISABLE_TELEMETRY': '1', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC': '1', 'DISABLE_AUTOUPDATER': '1',
           'DISABLE_ERROR_REPORTING': '1'}
    (cwd/'home').mkdir(exist_ok=True)
    r = subprocess.run([str(CLAUDE), '-p', prompt, '--output-format', 'json', *args], env=env, capture_output=True, text=True,
                       timeout=180, cwd=cwd)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return json.loads(r.stdout)

def test_claude_code_reads_a_file_through_the_gateway(tmp_path):
    "Claude Code asks, the model calls its Read tool, Claude Code runs it and sends the result back, the model answers."
    notes = tmp_path/'notes.txt'
    notes.write_text('The meeting moved to Thursday.\n')
    seen = []
    def reply(body):
        seen.append(body)
        last = body['messages'][-1]
        if last['role'] == 'tool':   # the fake "reads" the tool's result: it repeats the line if it is there
            return Reply('The notes say: The meeting moved to Thursday.' if 'The meeting moved to Thursday.' in last['content'] else 'No notes.')
        return Reply(tool_calls=[tool_call('Read', {'file_path': str(notes)})])
    with FakeLlamaServer(tools=True, reply=reply, n_ctx=262144) as fake, \
         GatewayServer(Gateway(ledger=Ledger(tmp_path/'ledger.sqlite'), models={'local': ModelSpec('local', 'llamacpp', base_url=fake.url + '/v1', ctx=200000)})) as srv:
        out = run_claude(srv, 'What do my notes say?', tmp_path)
        srv.gateway.ledger.flush()
        rows = srv.gateway.ledger.recent(10)
    assert not out['is_error'] and out['result'] == 'The notes say: The meeting moved to Thursday.', out
    tool_msgs = [m for m in seen[-1]['messages'] if m['role'] == 'tool']
    assert tool_msgs and 'The meeting moved to Thursday.' in tool_msgs[-1]['content'], seen[-1]['messages'][-2:]
    assert {(r['model'], r['dialect'], r['status']) for r in rows} == {('local', 'messages', 200)} and len(rows) >= 2, rows

CODEX = Path(sys.prefix)/'node'/'node_modules'/'.bin'/'codex'

def run_codex(srv, prompt:str, cwd:Path) -> str:
    "One `codex exec` run with its model provider set to the gateway (the Responses door); what it printed."
    home = cwd/'home'/'.codex'
    home.mkdir(parents=True, exist_ok=True)
    (home/'config.toml').write_text(f'model = "local"\nmodel_provider = "ramabana"\n\n[model_providers.ramabana]\nname = "ramabana"\n'
                                    f'base_url = "{srv.url}"\nwire_api = "responses"\nenv_key = "RAMABANA_KEY"\n')
    env = {**os.environ, 'HOME': str(cwd/'home'), 'CODEX_HOME': str(home), 'RAMABANA_KEY': 'sk-local'}
    r = subprocess.run([str(CODEX), 'exec', '--skip-git-repo-check', prompt], env=env, capture_output=True, text=True, timeout=180, cwd=cwd)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return r.stdout

@pytest.mark.skipif(not CODEX.exists(), reason=f'Codex CLI is not installed at {CODEX}: ./dev test installs it (npm install --prefix VENV/node)')
def test_codex_runs_a_command_through_the_gateway(tmp_path):
    "Codex asks, the model calls exec_command, Codex runs it and sends the output back, the model answers."
    (tmp_path/'notes.txt').write_text('The meeting moved to Thursday.\n')
    seen = []
    def reply(body):
        seen.append(body)
        last = body['messages'][-1]
        if last['role'] == 'tool':
            return Reply('The notes say: The meeting moved to Thursday.' if 'The meeting moved to Thursday.' in last['content'] else 'No notes.')
        return Reply(tool_calls=[tool_call('exec_command', {'cmd': 'cat notes.txt'})])
    with FakeLlamaServer(tools=True, reply=reply, n_ctx=262144) as fake, \
         GatewayServer(Gateway(ledger=Ledger(tmp_path/'ledger.sqlite'), models={'local': ModelSpec('local', 'llamacpp', base_url=fake.url + '/v1', ctx=200000)})) as srv:
        out = run_codex(srv, 'What do my notes say?', tmp_path)
        srv.gateway.ledger.flush()
        rows = srv.gateway.ledger.recent(10)
    assert 'The notes say: The meeting moved to Thursday.' in out, out
    assert {(r['model'], r['dialect'], r['status']) for r in rows} == {('local', 'responses', 200)} and len(rows) >= 2, rows
    assert rows[0]['info'] == {'dropped_tools': ['web_search']}, rows[0]['info']   # Codex's hosted web search: only OpenAI runs it
