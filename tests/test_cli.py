"""``python -m experiments``: argument checks, result folders, exit codes, figures.

Fast: the CLI runs tiny fake experiments registered for the test (the real registry
is swapped out), except for the MovieLens missing-data check, which uses the real
``shvar-fig5`` (it fails before any simulation).
"""

from __future__ import annotations

import json
import os

import jax
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import experiments.__main__ as cli  # noqa: E402
from experiments import _claims, _core  # noqa: E402
from jbandits.analysis import plotting  # noqa: E402

ENV = ("JBANDITS_DATA", "JBANDITS_PROGRESS", "JBANDITS_COMPILE_CACHE", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """main() sets environment variables for the run: restore them afterwards."""
    saved = {k: os.environ.get(k) for k in ENV}
    for k in ENV:
        monkeypatch.delenv(k, raising=False)
    # no persistent compilation cache in tests (test_compile_cache_... checks it)
    os.environ["JBANDITS_COMPILE_CACHE"] = "0"
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture
def calls(monkeypatch):
    """Replace the registry by fake experiments; returns the Configs they ran with."""
    ran: list[_core.Config] = []

    def ok(cfg):
        ran.append(cfg)
        x = np.arange(3.0)
        curve = {"x": x, "mean": x, "lo": x - 1, "hi": x + 1}
        return _core.Outcome(
            panels=[{"title": "t", "curves": {"A": curve, "B": curve}}],
            table=[{"algorithm": "A", "value": 1.0}],
            claims=[_claims.Claim("c", "o", "reproduced")],
            arrays={"x": x},
        )

    def missing(cfg):  # what a MovieLens loader raises without data
        ran.append(cfg)
        raise FileNotFoundError("no MovieLens path given and JBANDITS_DATA is not set")

    def exits(cfg):  # what experiments.shvar_movielens does without data
        ran.append(cfg)
        print("fake-exit: MovieLens data not available, skipping.")
        raise SystemExit(0)

    def broken_plot(cfg):  # fails after results.npz and meta.json are written
        ran.append(cfg)
        out = ok(cfg)
        out.panels = [{"curves": {"A": {"x": [0.0], "mean": [0.0, 1.0]}}}]
        return out

    fakes = {
        "fake-a": _core.Experiment("fake-a", "Fake A", "test", ok),
        "fake-b": _core.Experiment("fake-b", "Fake B", "test", ok),
        "fake-missing": _core.Experiment("fake-missing", "Missing", "test", missing),
        "fake-exit": _core.Experiment("fake-exit", "Exits", "test", exits),
        "fake-broken": _core.Experiment("fake-broken", "Broken", "test", broken_plot),
    }
    fakes["fake-a"].estimate = "~1 s"  # the others keep the default ""
    monkeypatch.setattr(_core, "EXPERIMENTS", fakes)
    monkeypatch.setattr(cli, "_load_all", lambda: None)
    return ran


def run(tmp_path, *args) -> int:
    """``main(["run", *args, "--out", tmp_path])``; its exit status."""
    rc = cli.main(["run", *args, "--out", str(tmp_path)])
    return 0 if rc is None else rc


def folders(path) -> list[str]:
    return sorted(os.listdir(path))


# 1 ------------------------------------------------------------------ unknown names
def test_unknown_name_is_rejected_before_anything_runs(tmp_path, calls, capsys):
    with pytest.raises(SystemExit) as info:
        run(tmp_path, "fake-a", "nope")
    assert info.value.code == 2
    assert calls == []  # fake-a did not run
    err = capsys.readouterr().err
    assert "nope" in err and "fake-a" in err and "fake-b" in err  # lists known names
    assert not os.path.exists(tmp_path) or folders(tmp_path) == []


# 2 ------------------------------------------------------------------ --reps
@pytest.mark.parametrize("reps", ["0", "-5", "abc"])
def test_reps_must_be_a_positive_integer(tmp_path, calls, capsys, reps):
    with pytest.raises(SystemExit) as info:
        run(tmp_path, "fake-a", f"--reps={reps}")
    assert info.value.code == 2
    assert calls == []
    assert "integer >= 1, got " in capsys.readouterr().err


# 3 ------------------------------------------------------------------ missing data
def test_missing_data_fails_at_the_end_and_others_still_run(tmp_path, calls, capsys):
    rc = run(tmp_path, "fake-a", "fake-missing", "fake-exit", "fake-b")
    assert rc == 1
    assert [c.name for c in calls] == ["fake-a", "fake-missing", "fake-exit", "fake-b"]
    # only complete folders, nothing half-written (no temporary folder left either)
    assert folders(tmp_path) == ["fake-a", "fake-b"]
    for name in ("fake-a", "fake-b"):
        assert set(os.listdir(tmp_path / name)) == {
            "results.npz",
            "meta.json",
            "figure.png",
            "table.md",
        }
    err = capsys.readouterr().err
    tail = err[err.index("error:") :]
    assert "fake-missing" in tail and "fake-exit" in tail and "--data" in tail


def test_failed_rerun_keeps_the_older_complete_folder(tmp_path, calls):
    assert run(tmp_path, "fake-a") == 0
    (tmp_path / "fake-a" / "stale.txt").write_text("from an older run")
    assert run(tmp_path, "fake-a") == 0  # a complete rerun replaces the whole folder
    assert "stale.txt" not in os.listdir(tmp_path / "fake-a")
    (tmp_path / "fake-a" / "stale.txt").write_text("from an older run")
    _core.EXPERIMENTS["fake-a"].run = _core.EXPERIMENTS["fake-broken"].run
    with pytest.raises(ValueError):  # the plot fails after two files were written
        run(tmp_path, "fake-a")
    assert folders(tmp_path) == ["fake-a"]  # no partial folder left behind
    assert "stale.txt" in os.listdir(tmp_path / "fake-a")  # older one untouched


def test_movielens_without_data_exits_nonzero_and_writes_nothing(tmp_path, capsys):
    cli._load_all()  # the real registry (outside any monkeypatch of it)
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    rc = cli.main(
        ["run", "shvar-fig5", "--quick", "--data", str(empty), "--out", str(out)]
        + ["--reps", "2"]
    )
    assert rc == 1
    assert not out.exists() or folders(out) == []
    assert "shvar-fig5" in capsys.readouterr().err.split("error:")[-1]


# 4 ------------------------------------------------------------------ folder names
def test_reps_and_seed_runs_get_their_own_folder(tmp_path, calls):
    assert run(tmp_path, "fake-a", "--quick") == 0
    assert run(tmp_path, "fake-a", "--quick", "--reps", "3", "--seed", "2") == 0
    assert run(tmp_path, "fake-a", "--seed", "5") == 0
    assert folders(tmp_path) == [
        "fake-a-quick",
        "fake-a-quick-reps3-seed2",
        "fake-a-seed5",
    ]
    table = (tmp_path / "fake-a-quick-reps3-seed2" / "table.md").read_text()
    assert "run fake-a --quick --reps 3 --seed 2`" in table
    assert [(c.reps, c.seed) for c in calls] == [(None, 0), (3, 2), (None, 5)]


# 5 ------------------------------------------------------------------ --data
def test_data_option_sets_the_movielens_path(tmp_path, calls):
    data = tmp_path / "ml"
    data.mkdir()
    out = tmp_path / "out"
    seen = []
    fake = _core.EXPERIMENTS["fake-a"]
    inner = fake.run
    fake.run = lambda cfg: seen.append(os.environ.get("JBANDITS_DATA")) or inner(cfg)
    assert run(out, "fake-a", "--data", str(data)) == 0
    assert seen == [str(data)]
    assert calls[0].extra["data"] == str(data)


def test_data_option_must_exist(tmp_path, calls, capsys):
    with pytest.raises(SystemExit) as info:
        run(tmp_path, "fake-a", "--data", str(tmp_path / "nowhere"))
    assert info.value.code == 2 and "no such file" in capsys.readouterr().err


# 6 ------------------------------------------------------------------ help and list
def _option_help(text: str, option: str) -> str:
    """The help text argparse prints for ``option`` (same line or the next ones)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("  " + option):  # argparse indents arguments by 2
            rest = line.strip()[len(option) :].split("  ", 1)
            words = [rest[1]] if len(rest) > 1 else []
            for nxt in lines[i + 1 :]:
                if not nxt.startswith(" " * 10) or nxt.strip().startswith("-"):
                    break
                words.append(nxt)
            return " ".join(w.strip() for w in words).strip()
    raise AssertionError(f"{option} not in help")


def test_every_run_option_has_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = capsys.readouterr().out
    for option in (
        "NAME",
        "--quick",
        "--reps",
        "--seed",
        "--out",
        "--data",
        "--quiet",
        "--no-compile-cache",
    ):
        assert len(_option_help(text, option)) > 15, option


def test_list_shows_a_runtime_estimate(calls, capsys):
    cli.main(["list"])
    lines = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()}
    assert "~1 s" in lines["fake-a"]
    assert lines["fake-b"].split()[1] == "?"  # no estimate yet


def test_every_registered_experiment_lists_a_runtime_estimate():
    cli._load_all()
    assert len(_core.EXPERIMENTS) >= 19
    for name, exp in _core.EXPERIMENTS.items():
        assert cli.estimate(name, exp) != "?", name


# 7 ------------------------------------------------------------------ progress
def test_quiet_turns_progress_bars_off_and_messages_stay(tmp_path, calls, capsys):
    assert run(tmp_path, "fake-a") == 0
    assert "JBANDITS_PROGRESS" not in os.environ  # runner default: bars after 2 s
    err = capsys.readouterr().err
    assert "[fake-a] start" in err and "[fake-a] done in" in err
    assert run(tmp_path, "fake-a", "--quiet") == 0
    assert os.environ["JBANDITS_PROGRESS"] == "0"
    err = capsys.readouterr().err
    assert "[fake-a] start" in err and "[fake-a] done in" in err


# 8 ------------------------------------------------------------------ compile cache
def test_compile_cache_is_on_by_default(tmp_path, calls, monkeypatch):
    updates = {}
    monkeypatch.setattr(jax.config, "update", lambda k, v: updates.__setitem__(k, v))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("JBANDITS_COMPILE_CACHE")
    assert run(tmp_path / "out", "fake-a") == 0
    assert updates == {
        "jax_compilation_cache_dir": str(tmp_path / "xdg" / "jbandits" / "jax"),
        "jax_persistent_cache_min_compile_time_secs": 0,
        "jax_persistent_cache_min_entry_size_bytes": -1,
    }
    updates.clear()
    assert run(tmp_path / "out", "fake-a", "--no-compile-cache") == 0
    assert updates == {}
    monkeypatch.setenv("JBANDITS_COMPILE_CACHE", "0")
    assert run(tmp_path / "out", "fake-a") == 0
    assert updates == {}


# 9 ------------------------------------------------------------------ figure
def test_eleven_series_have_distinct_styles_and_the_legend_hides_nothing(
    tmp_path, monkeypatch
):
    figures = []
    monkeypatch.setattr(plotting.plt, "close", figures.append)
    x = np.linspace(1.0, 10.0, 20)
    curves = {
        f"series {i}": {"x": x, "mean": np.sin(x + i), "lo": np.sin(x + i) - 0.1}
        | {"hi": np.sin(x + i) + 0.1}
        for i in range(11)
    }
    panels = [{"title": f"p{j}", "curves": curves} for j in range(3)]
    plotting.plot_panels(panels, str(tmp_path / "f.png"))
    (fig,) = figures
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    legends = list(fig.legends) + [ax.get_legend() for ax in axes if ax.get_legend()]
    assert legends
    for ax in axes:
        styles = [
            (matplotlib.colors.to_hex(line.get_color()), line.get_linestyle())
            for line in ax.get_lines()
        ]
        assert len(styles) == 11
        assert len(set(styles)) == 11, styles
        box = ax.get_window_extent(renderer)
        for legend in legends:
            assert not box.overlaps(legend.get_window_extent(renderer))
    # the same label has the same style in every panel
    first = [(line.get_color(), line.get_linestyle()) for line in axes[0].get_lines()]
    for ax in axes[1:]:
        assert [(ln.get_color(), ln.get_linestyle()) for ln in ax.get_lines()] == first


# 10 ----------------------------------------------------------------- devices
def test_device_count_and_kind_in_table_and_meta(tmp_path, calls):
    assert run(tmp_path, "fake-a") == 0
    n, kind = jax.device_count(), jax.devices()[0].platform
    meta = json.loads((tmp_path / "fake-a" / "meta.json").read_text())
    assert meta["versions"]["device_count"] == n
    assert meta["versions"]["device_kind"].startswith(f"{n} x {kind}")
    assert f"{n} x {kind}" in (tmp_path / "fake-a" / "table.md").read_text()


# 11 ----------------------------------------------------------------- bad inputs
def _one_line_error(capsys) -> str:
    """The whole stderr: one line, ``... error: ...``, no traceback."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    "args",
    [
        ["run", "nope"],
        ["run", "fake-a", "--reps", "0"],
        ["run", "fake-a", "--reps", "-5"],
        ["run", "fake-a", "--reps", "2.5"],
        ["run", "fake-a", "--reps", "twenty"],
        ["run", "fake-a", "--seed", "-1"],
        ["run", "fake-a", "--seed", str(2**64)],  # was an OverflowError traceback
        ["run", "fake-a", "--seed", str(2**22)],  # would wrap onto another seed
        ["run", "fake-a", "--seed", "1.5"],
        ["run", "fake-a", "--data", "/no/such/ratings.dat"],
        ["run"],
        ["lst"],
        ["list", "extra"],
    ],
)
def test_bad_arguments_are_one_line_usage_errors(tmp_path, calls, capsys, args):
    with pytest.raises(SystemExit) as info:
        cli.main(
            args + (["--out", str(tmp_path / "out")] if args[:1] == ["run"] else [])
        )
    assert info.value.code == 2 and calls == []
    _one_line_error(capsys)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["file", "under-file", "empty"])
def test_out_must_be_a_folder(tmp_path, calls, capsys, where):
    """``--out`` naming a file (or a path under one) was a FileExistsError /
    NotADirectoryError traceback; an empty one a 'missing input data' failure."""
    (tmp_path / "afile").write_text("not a folder")
    out = {"file": tmp_path / "afile", "under-file": tmp_path / "afile" / "sub"}
    with pytest.raises(SystemExit) as info:
        cli.main(["run", "fake-a", "--out", str(out.get(where, ""))])
    assert info.value.code == 2 and calls == []
    assert "argument --out" in _one_line_error(capsys)
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_resume_store_of_other_work_names_out(tmp_path, calls, capsys):
    """A results store of other work in OUT/.resume/NAME: one line naming --out."""
    pytest.importorskip("pyarrow")
    from jbandits.analysis.store import Store

    path = str(tmp_path / ".resume" / "fake-a" / "0-digest")
    Store(path, fingerprint={"work": "older"})
    inner = _core.EXPERIMENTS["fake-a"].run
    _core.EXPERIMENTS["fake-a"].run = lambda cfg: (
        Store(path, fingerprint={"work": "this one"}),
        inner(cfg),
    )[1]
    assert run(tmp_path, "fake-a") == 2
    err = capsys.readouterr().err.splitlines()
    assert err[1].startswith("[fake-a] start") and len(err) == 3, err  # [0]: resuming
    assert "argument --out" in err[2] and "different work" in err[2]
    assert "Traceback" not in err[2] and "fake-a" not in folders(tmp_path)


@pytest.mark.parametrize("blocked", [".resume", ".resume/fake-a"])
def test_resume_path_that_is_a_file_names_out(tmp_path, calls, capsys, blocked):
    pytest.importorskip("pyarrow")
    if blocked != ".resume":
        (tmp_path / ".resume").mkdir()
    (tmp_path / blocked).write_text("not a folder")
    assert run(tmp_path, "fake-a") == 2 and calls == []
    assert "argument --out" in _one_line_error(capsys)


def test_ctrl_c_ends_with_130_and_one_line(tmp_path, calls, capsys):
    def interrupted(cfg):
        raise KeyboardInterrupt

    _core.EXPERIMENTS["fake-a"].run = interrupted
    assert run(tmp_path, "fake-a", "fake-b") == 130
    err = capsys.readouterr().err.splitlines()
    assert "interrupted" in err[-1] and len(err) == 2, err
    assert folders(tmp_path) == []  # fake-b did not start, nothing half-written


@pytest.mark.parametrize(
    "kwargs",
    [{"reps": 0}, {"reps": 2.5}, {"reps": True}, {"seed": -1}, {"seed": 2**22}],
)
def test_config_checks_reps_and_seed(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        _core.Config("fake-a", **kwargs)


def test_config_accepts_numpy_integers():
    cfg = _core.Config("fake-a", reps=np.int64(3), seed=np.int64(2))
    assert (cfg.reps, cfg.seed) == (3, 2) and type(cfg.reps) is int


# 12 ----------------------------------------------------------------- README commands
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme_command(number: int) -> str:
    """The shell line under ``# (number)`` in the README's 'Two commands' block."""
    with open(os.path.join(ROOT, "README.md")) as f:
        block = f.read().split("## Two commands", 1)[1].split("```bash", 1)[1]
    lines = block.split("```", 1)[0].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"# ({number})"))
    return next(ln for ln in lines[start:] if ln and not ln.startswith("#"))


def _installed_requirements(command: str) -> list[str]:
    """The requirements that ``pip install -e ".[extras]"`` in ``command`` adds to the
    package's own."""
    import re
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    spec = re.search(r"pip install -q -e (\S+)", command).group(1).strip("\"'")
    extras = re.fullmatch(r"\.(?:\[([\w,]*)\])?", spec).group(1) or ""
    reqs = list(project["dependencies"])
    for extra in filter(None, extras.split(",")):
        reqs += project["optional-dependencies"][extra]
    return reqs


def test_readme_main_job_installs_what_resume_needs():
    """Command (1) runs the main job with resume on: it must install pyarrow (it
    installed ``-e .`` and the job printed 'resume off (no pyarrow)')."""
    main_job = _readme_command(1)
    assert "python -m experiments run lsa-fig1 --quick" in main_job
    assert "--no-resume" not in main_job
    assert any(r.startswith("pyarrow") for r in _installed_requirements(main_job))


def test_ci_runs_readme_command_2_verbatim():
    """.ci/run makes the virtual environment (its own line), then runs the rest of
    README command (2) verbatim."""
    venv, rest = _readme_command(2).split(" && ", 1)
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        lines = f.read().splitlines()
    assert venv == "python3 -m venv .venv" and venv in lines and rest in lines


def test_ci_stops_when_readme_command_2_fails_before_its_last_step(tmp_path):
    """Under ``set -e`` a failure before the last ``&&`` of a list does not end a
    bash script: the line after README command (2) in .ci/run must. The command is
    replaced by one whose first step fails; the script must exit non-zero without
    reaching the next line."""
    import subprocess

    rest = _readme_command(2).split(" && ", 1)[1]
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        lines = f.read().splitlines()
    after = lines[lines.index(rest) + 1 :]
    guard = next(line for line in after if not line.startswith("#"))
    script = tmp_path / "ci.sh"
    script.write_text(
        "set -euo pipefail\nfalse && true\n" + guard + "\necho reached-next-step\n"
    )
    out = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert out.returncode != 0
    assert "reached-next-step" not in out.stdout
