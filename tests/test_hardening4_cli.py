"""Hardening round 4 (issue 65) on ``jbandits sweep``: class 2 (a store refuses
results of code that changed), class 5 (a config's ``imports`` load under a private
name; exits, interrupts and bad names are one line) and class 6 (an existing folder
that is not a store, or a symbolic link, is never written into)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import jbandits
from jbandits.cli import config
from jbandits.cli import main as cli

POLICY = "h4_cli_fixed"

CONFIG = """\
name = "t"
reps = 2
budgets = [10]
imports = [{imports}]

[instances]
means = [[0.2, 0.8]]

[[policies]]
name = "{policy}"
"""

# a user's policy file: pulls arm ARM for ever
POLICY_FILE = """
from typing import NamedTuple
import jax.numpy as jnp
import jbandits

ARM = {arm}

class S(NamedTuple):
    t: object
    arm: object

@jbandits.registry.policy("{name}")
def fixed(num_arms):
    def init(key, arm_mask):
        return S(jnp.zeros((), jnp.int32), jnp.asarray(ARM, jnp.int32))

    def step(state, key, reward):
        return S(state.t + 1, state.arm)

    return jbandits.Policy(init, step, lambda s: s.arm, "regret")
"""


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.setenv("JBANDITS_COMPILE_CACHE", "0")
    before = set(sys.modules)
    yield
    if POLICY in jbandits.names():
        jbandits.core.registry.unregister(POLICY)
    for name in set(sys.modules) - before:
        if name.startswith("_jbandits_config_"):
            del sys.modules[name]


def setup(tmp_path, imports='"pol.py"', policy=POLICY, arm=0, body=None):
    (tmp_path / "pol.py").write_text(
        POLICY_FILE.format(arm=arm, name=POLICY) if body is None else body
    )
    path = tmp_path / "sweep.toml"
    path.write_text(CONFIG.format(imports=imports, policy=policy))
    return str(path)


def sweep(path, out, capsys):
    rc = cli.main(["sweep", path, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    return rc, err


# ------------------------------------------------------------------- class 2
def test_a_sweep_refuses_its_store_once_the_imported_code_changed(tmp_path, capsys):
    path = setup(tmp_path)
    assert sweep(path, tmp_path / "out", capsys)[0] == 0
    setup(tmp_path, arm=1)  # the policy's file edited
    rc, err = sweep(path, tmp_path / "out", capsys)
    assert rc == 2 and "\n" not in err, err
    assert f"other code: the code of policy {POLICY} changed" in err
    assert "--out" in err
    summary = (tmp_path / "out" / "t" / "summary.csv").read_text()
    setup(tmp_path, arm=0)  # back to the code of the store: resumed
    rc, err = sweep(path, tmp_path / "out", capsys)
    assert rc == 0 and "1 chunks resumed" in err, err
    assert (tmp_path / "out" / "t" / "summary.csv").read_text() == summary


# ------------------------------------------------------------------- class 5
@pytest.mark.parametrize("stem", ["json", "os", "numpy", "jbandits", "config"])
def test_an_imported_file_named_like_a_module_does_not_replace_it(tmp_path, stem):
    modules = {n: sys.modules.get(n) for n in (stem, "json")}
    (tmp_path / f"{stem}.py").write_text("VALUE = 42\n")
    path = setup(tmp_path, imports=f'"pol.py", "{stem}.py"')
    config.load(path)
    for name, module in modules.items():
        assert sys.modules.get(name) is module, name
    import json as stdlib_json

    assert hasattr(stdlib_json, "JSONEncoder")
    private = [m for n, m in sys.modules.items() if n.startswith("_jbandits_config_")]
    assert sorted(getattr(m, "VALUE", None) is not None for m in private) == [
        False,
        True,
    ]
    assert POLICY in jbandits.names()


@pytest.mark.parametrize(
    "body, rc, words",
    [
        ("import sys\nsys.exit(0)\n", 2, "called sys.exit(0) while it was imported"),
        ("import sys\nsys.exit('bye')\n", 2, "called sys.exit('bye')"),
        ("raise SystemExit\n", 2, "called sys.exit(None)"),
        ("raise KeyboardInterrupt\n", 130, "interrupted while importing it"),
        ("raise GeneratorExit\n", 2, "pol.py': GeneratorExit"),
        ("import no_such_module_h4\n", 2, "ModuleNotFoundError"),
    ],
)
def test_an_import_that_exits_or_is_interrupted_is_one_line(
    tmp_path, capsys, body, rc, words
):
    path = setup(tmp_path, body=body)
    got, err = sweep(path, tmp_path / "out", capsys)
    assert got == rc and "\n" not in err and words in err, (got, err)
    assert err.startswith("jbandits sweep: ")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "entry", ["base.toml.in", "my-family", "pkg..mod", "2fast", "a.b.c.txt", "a.b"]
)
def test_an_import_that_is_no_module_name_nor_py_file_is_named(tmp_path, entry):
    path = setup(tmp_path, imports=f'"{entry}"')
    if entry.startswith("a."):  # a file of that name (a module name otherwise)
        (tmp_path / entry).write_text("")
    with pytest.raises(config.ConfigError) as err:
        config.load(path)
    assert "neither a module name" in str(err.value)
    assert repr(entry) in str(err.value)
    if entry.startswith("a."):
        assert "names a file that is not a .py file" in str(err.value)


def test_a_module_that_is_not_found_says_where_it_was_looked_for(tmp_path):
    path = setup(tmp_path, imports='"h4_no_such_module"')
    with pytest.raises(config.ConfigError, match="current folder; a file of yours"):
        config.load(path)


def test_a_module_import_does_not_let_the_current_folder_shadow_a_module(
    tmp_path, monkeypatch
):
    (tmp_path / "h4_local_mod.py").write_text(POLICY_FILE.format(arm=0, name=POLICY))
    (tmp_path / "csv.py").write_text("raise RuntimeError('shadowed')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "csv", raising=False)
    path = setup(tmp_path, imports='"h4_local_mod"')
    (tmp_path / "h4_local_mod.py").write_text(
        "import csv\n" + POLICY_FILE.format(arm=0, name=POLICY)
    )
    try:
        config.load(path)  # the local module is found; csv is the library's
        assert POLICY in jbandits.names()
        assert hasattr(sys.modules["csv"], "reader")
    finally:
        sys.modules.pop("h4_local_mod", None)


def test_the_same_file_is_run_once_and_again_when_it_changed(tmp_path):
    counter = tmp_path / "count.txt"
    counter.write_text("")
    body = (
        f"with open({str(counter)!r}, 'a') as f:\n    f.write('x')\n"
        + POLICY_FILE.format(arm=0, name=POLICY)
    )
    path = setup(tmp_path, body=body)
    config.load(path)
    config.load(path)
    assert counter.read_text() == "x"
    setup(tmp_path, body=body + "\n# edited\n")
    config.load(path)
    assert counter.read_text() == "xx"


# ------------------------------------------------------------------- class 6
def _refused(tmp_path, capsys, folder_words):
    path = setup(tmp_path)
    rc, err = sweep(path, tmp_path / "out", capsys)
    assert rc == 2 and "\n" not in err, err
    assert folder_words in err and "--out" in err, err


@pytest.mark.parametrize(
    "files",
    [
        {"summary.csv": "mine\n", "figure.png": "mine"},
        {"notes.txt": "mine"},
        {"manifest.json": "not json"},
        {"manifest.json": json.dumps({"name": "my own manifest"})},
    ],
)
def test_an_existing_folder_that_is_not_a_store_is_refused(tmp_path, capsys, files):
    folder = tmp_path / "out" / "t"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    _refused(tmp_path, capsys, "exists and is not a results store")
    for name, text in files.items():
        assert (folder / name).read_text() == text
    assert sorted(os.listdir(folder)) == sorted(files)


@pytest.mark.parametrize("target", ["store", "empty", "missing"])
def test_a_symbolic_link_as_the_sweeps_folder_is_refused(tmp_path, capsys, target):
    (tmp_path / "out").mkdir()
    elsewhere = tmp_path / "elsewhere"
    if target != "missing":
        elsewhere.mkdir()
    if target == "store":
        (elsewhere / "manifest.json").write_text(json.dumps({"fingerprint": {}}))
    os.symlink(elsewhere, tmp_path / "out" / "t")
    _refused(tmp_path, capsys, "is a symbolic link")
    if target != "missing":
        assert os.listdir(elsewhere) == (["manifest.json"] if target == "store" else [])


def test_an_empty_folder_or_a_store_of_the_same_work_is_used(tmp_path):
    (tmp_path / "out" / "t").mkdir(parents=True)
    assert cli.result_folder(str(tmp_path / "out"), "t") == str(tmp_path / "out" / "t")


@pytest.mark.slow  # a subprocess (imports the library, one small sweep): ~15 s
def test_the_command_keeps_json_working_after_importing_json_py(tmp_path):
    where = tmp_path / "cfg"  # not the current folder (python -m searches that)
    where.mkdir()
    (where / "json.py").write_text("VALUE = 1\n")
    path = setup(where, imports='"json.py", "pol.py"')
    env = dict(os.environ, JAX_PLATFORMS="cpu", JBANDITS_PROGRESS="0")
    env["JBANDITS_COMPILE_CACHE"] = "0"
    proc = subprocess.run(
        [sys.executable, "-m", "jbandits.cli.main", "sweep", path, "--out",
         str(tmp_path / "out"), "--quiet"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "out" / "t" / "figure.png").stat().st_size > 0


# ------------------------------------------------- class 3 through the command
GAUSS_CONFIG = """\
name = "g"
reps = 2
budgets = [50]
bandit = "gaussian"
{extra}
[instances]
means = [[0.0, 1.0]]
std = 1.0

[[policies]]
name = "uniform_glr"
delta = 0.1
"""


def test_a_config_runs_a_bernoulli_policy_on_gaussian_rewards_only_when_told(
    tmp_path, capsys
):
    path = tmp_path / "g.toml"
    path.write_text(GAUSS_CONFIG.format(extra=""))
    rc, err = sweep(str(path), tmp_path / "out", capsys)
    assert rc == 2 and len(err.splitlines()) == 1
    assert "check_model = false" in err
    path.write_text(GAUSS_CONFIG.format(extra="check_model = false"))
    rc, err = sweep(str(path), tmp_path / "out2", capsys)
    assert rc == 0, err


@pytest.mark.parametrize("value", ['"no"', "0", "[false]"])
def test_check_model_in_a_config_must_be_a_bool(value):
    cfg = {"name": "g", "reps": 1, "budgets": [5], "check_model": None,
           "instances": {"means": [[0.2, 0.8]]}, "policies": [{"name": "apt"}]}  # fmt: skip
    import tomllib

    cfg["check_model"] = tomllib.loads(f"v = {value}")["v"]
    with pytest.raises(config.ConfigError, match="check_model must be true or false"):
        config.check(cfg)
