"""Write the documentation pages that come from the code (run by docs/conf.py).

* ``docs/algorithms/<name>.md``: one page per registered policy (``jbandits.names()``):
  the hand-written rule, paper and variants from ``docs/algorithm_notes/<name>.md``,
  then what the registry knows (signature, defaults, which arguments are static), the
  factory's and its module's docstrings and the policy's trace-test cases.
* ``docs/api/<module>.md``: an autosummary list of every public name of a module; Sphinx
  writes one page per name under ``docs/api/generated/``.
* ``docs/gallery/``: one page per experiment of ``python -m experiments list`` and one
  per family section of ``experiments/REPORT.md``; a figure and claims table appear
  when ``results/`` holds them (the build runs no experiment).
* ``docs/notebooks/``: copies of ``notebooks/*.ipynb`` (myst-nb executes them).

Every output folder is deleted and written again, so a page never outlives its source.
A registered policy without a note in ``docs/algorithm_notes/`` stops the build.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pathlib
import pkgutil
import re
import shutil
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
NOTES = DOCS / "algorithm_notes"

# ------------------------------------------------------------------------------ API
# (module, title, names or None for its public names); the top-level policy
# factories (jbandits.apt, ...) have algorithm pages instead
API = [
    ("jbandits", "Top level: run, simulate, sweep", None),
    ("jbandits.core.registry", "Registry: make, names, register", None),
    ("jbandits.envs", "Environments", None),
    ("jbandits.analysis.metrics", "Metrics", None),
    ("jbandits.analysis.stats", "Statistics: paired differences and intervals", None),
    ("jbandits.envs.problems", "Paper problem instances", None),
    ("jbandits.analysis.truth", "True-instance quantities", None),
    ("jbandits.analysis.oracles", "Oracle constants", None),
    ("jbandits.core.numbers", "Structure and numbers (params as data)", None),
    ("jbandits.core.declared", "Declared number types and optional numbers", None),
    ("jbandits.core.execution", "Execution options", None),
    ("jbandits.tuning", "Tuning", None),
    ("jbandits.sim.runner", "Runner (low-level tier)", None),
    ("jbandits.analysis.store", "Results store", None),
    ("jbandits.sim", "Batched entry points", None),
    ("jbandits.sim.replication", "One replication (shared by both backends)", None),
    ("jbandits.sim.engine", "Engine", None),
    ("jbandits.sim.trace", "Trace equivalence: check a policy arm for arm", None),
    ("jbandits.core.types", "Types", None),
    ("jbandits.analysis.plotting", "Plotting", None),
    ("jbandits.policies.blocks.arms", "Arm building blocks", None),
    ("jbandits.policies.blocks.schedules", "Host schedules", None),
    ("jbandits.policies.blocks.numerics", "Numerics", None),
    ("jbandits.policies.blocks.index", "Author tier: the index-policy skeleton", None),
    ("jbandits.policies.blocks.phases", "Author tier: phases and eliminations", None),
    ("jbandits.policies.blocks.rounds", "Author tier: rounds", None),
    ("jbandits.policies.blocks.sampling", "Author tier: the Beta sampler", None),
    ("jbandits.policies.blocks.glr", "Author tier: GLR stopping", None),
    (
        "jbandits.policies.blocks.fixed_confidence",
        "Author tier: the fixed-confidence skeleton",
        None,
    ),
    ("jbandits.policies.blocks.tracking", "Author tier: tracking rules' parts", None),
    ("jbandits.policies.blocks.tstar", "Author tier: optimal weights", None),
    ("jbandits.policies.blocks.posterior", "Author tier: posteriors", None),
    ("jbandits.policies.blocks.kl_bounds", "Author tier: KL confidence bounds", None),
    ("jbandits.envs.common", "Defining a reward family", None),
    ("jbandits.analysis.fixed_confidence", "Fixed-confidence verdicts", None),
]


def public_names(module_name: str) -> list[str]:
    """The public names of a module: its ``__all__``, else the functions and classes
    defined in it whose names do not start with an underscore."""
    import jbandits

    module = importlib.import_module(module_name)
    if module_name == "jbandits":
        policies = set(jbandits.names())
        return [
            n
            for n in module.__all__
            if n not in policies and not inspect.ismodule(getattr(module, n))
        ]
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n
            for n, v in vars(module).items()
            if not n.startswith("_")
            and (inspect.isfunction(v) or inspect.isclass(v))
            and getattr(v, "__module__", None) == module_name
        ]
    return list(names)


def _api_page(module_name: str, title: str, names: list[str]) -> str:
    lines = [
        f"# `{module_name}`: {title.split(': ')[-1] if ': ' in title else title}",
        "",
        "```{eval-rst}",
        f".. automodule:: {module_name}",
        "   :no-members:",
        "",
        f".. currentmodule:: {module_name}",
        "",
        ".. autosummary::",
        "   :toctree: generated",
        "   :nosignatures:",
        "",
    ]
    lines += [f"   {n}" for n in sorted(names, key=str.lower)]
    lines += ["```", ""]
    return "\n".join(lines)


def write_api(out: pathlib.Path) -> list[tuple[str, str, int]]:
    for old in out.glob("jbandits*.md"):
        old.unlink()
    shutil.rmtree(out / "generated", ignore_errors=True)
    import jbandits

    # a class re-exported at the top level is documented there only (twice would be
    # two descriptions of one object)
    top = {id(getattr(jbandits, n)) for n in public_names("jbandits")}
    written = []
    for module_name, title, names in API:
        names = names or public_names(module_name)
        if module_name != "jbandits":
            module = importlib.import_module(module_name)
            names = [
                n
                for n in names
                if not (
                    inspect.isclass(getattr(module, n))
                    and id(getattr(module, n)) in top
                )
            ]
        (out / f"{module_name}.md").write_text(_api_page(module_name, title, names))
        written.append((module_name, title, len(names)))
    return written


# ----------------------------------------------------------------------- algorithms
def _trace_cases() -> dict[str, list]:
    """Trace cases by registry name, each with the test file that runs it."""
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import cases
    from trace_files import FILES, SLOW

    family_of = {m: fam for fam, mods in FILES.items() for m in mods}
    found: dict[str, list] = {}
    for info in sorted(pkgutil.iter_modules(cases.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"cases.{info.name}")
        for case in module.CASES:
            ref = case.reference
            found.setdefault(case.registry_name, []).append(
                {
                    "id": case.name,
                    "file": f"tests/test_trace_{family_of.get(info.name, '?')}.py",
                    "cases": f"tests/cases/{info.name}.py",
                    "reference": _reference_name(ref),
                    "k_max": case.k_max,
                    "horizon": case.horizon,
                    "instances": case.num_instances,
                    "slow": case.name in SLOW,
                }
            )
    return found


def _reference_name(ref) -> str:
    """``tests/reference/<path>.py: <function>`` of a reference implementation."""
    path = "tests/" + ref.__module__.replace(".", "/") + ".py"
    qualname = getattr(ref, "__qualname__", "?").split(".<locals>")[0]
    return f"{path}: {qualname}"


def _kind(name: str, param: inspect.Parameter) -> str:
    """How the runner treats an argument, from the registry and the annotation."""
    from jbandits.core import numbers, registry

    static = set(numbers.STATIC_INTS) | set(
        getattr(getattr(registry, "_ENTRIES", {}).get(name), "static", ())
    )
    default = param.default
    note = str(param.annotation)
    if param.name in static:
        return "static (shapes the program)"
    if isinstance(default, (str, bool)) or note in ("str", "bool", "str | None"):
        return "static (a switch)"
    if "Execution" in note:
        return "static (how the step compiles)"
    if "ArrayLike" in note or isinstance(default, (int, float)):
        if default is None:
            return "number (traced), or None for the default rule (see the docstring)"
        return "number (traced: a sweep over it compiles once)"
    return "host-computed input, usually left to the runner (see the docstring)"


def _fmt_default(param: inspect.Parameter) -> str:
    if param.default is inspect.Parameter.empty:
        return "required"
    return f"`{param.default!r}`"


def _algorithm_page(name: str, note: str, cases: list) -> str:
    from jbandits.core import registry

    factory = registry.raw_factory(name)
    params = [
        p
        for p in inspect.signature(factory).parameters.values()
        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    target = f"{factory.__module__}.{factory.__qualname__}"
    call = ", ".join(
        ["num_arms=K"]
        + [
            f"{p.name}=..."
            for p in params
            if p.name != "num_arms" and p.default is inspect.Parameter.empty
        ]
    )
    out = [f"(algo-{name})=", note.rstrip(), "", "## Arguments and defaults", ""]
    out += [
        f'`jbandits.make("{name}", {call})`, or `jbandits.{name}(K, ...)`; '
        f"the factory is `{target}`.",
        "",
        "| argument | default | kind |",
        "| --- | --- | --- |",
    ]
    out += [f"| `{p.name}` | {_fmt_default(p)} | {_kind(name, p)} |" for p in params]
    hooks = []
    if registry.prepare_hook(name) is not None:
        hooks.append(
            "a host-side `prepare` hook, which computes its schedule per cell (exact "
            "for the cell's real number of arms and budget)"
        )
    entry = getattr(registry, "_ENTRIES", {}).get(name)
    if getattr(entry, "min_budget", None) is not None:
        hooks.append(
            "a `min_budget` hook, with which `simulate` and the sweeps refuse a "
            "budget below the smallest one its schedule exists for"
        )
    if hooks:
        out += ["", "Registered with " + "; ".join(hooks) + "."]
    out += [
        "",
        "## The factory's docstring",
        "",
        "```{eval-rst}",
        f".. autofunction:: {target}",
        "   :no-index:",
        "```",
        "",
        "## Implementation notes",
        "",
        f"The docstring of `{factory.__module__}`, verbatim (plain text, as `help()` "
        "shows it):",
        "",
        "````text",
        inspect.cleandoc(sys.modules[factory.__module__].__doc__ or "(none)"),
        "````",
        "",
        "## Trace-equivalence tests",
        "",
    ]
    if not cases:
        out += [
            "**No trace case.** `tests/test_trace.py` fails until one is added in "
            "`tests/cases/`.",
        ]
    else:
        out += [
            f"{len(cases)} case(s) compare the JAX policy with its plain-Python "
            "reference arm for arm on random replay tables (padded arms, budgets not "
            "a multiple of K, exact ties); each must agree on at least 200 instances.",
            "",
            "| case id | reference | K max | max budget | instances | run by |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for c in cases:
            where = f"`{c['file']}`" + (" (slow set)" if c["slow"] else "")
            out.append(
                f"| `{c['id']}` | `{c['reference']}` | {c['k_max']} | "
                f"{c['horizon']} | {c['instances']} | {where} |"
            )
        out += [
            "",
            f"Cases are defined in `{cases[0]['cases']}`. This page lists them; "
            "it does not run them (CI does).",
        ]
    return "\n".join(out) + "\n"


def _title_of(note: str, name: str) -> str:
    for line in note.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"docs/algorithm_notes/{name}.md has no '# ' title")


def write_algorithms(out: pathlib.Path) -> int:
    import jbandits

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    names = jbandits.names()
    missing = [n for n in names if not (NOTES / f"{n}.md").exists()]
    if missing:
        raise RuntimeError(
            f"registered policies without docs/algorithm_notes/<name>.md: {missing}"
        )
    cases = _trace_cases()
    groups: dict[str, list] = {}
    for name in names:
        note = (NOTES / f"{name}.md").read_text()
        m = re.search(r"^setting:\s*(.+)$", note, re.M)
        setting = m.group(1).strip() if m else "other"
        note = re.sub(r"^setting:.*\n", "", note, flags=re.M)
        (out / f"{name}.md").write_text(
            _algorithm_page(name, note, cases.get(name, []))
        )
        groups.setdefault(setting, []).append((name, _title_of(note, name)))
    index = [
        "# Algorithms",
        "",
        f"One page per registered policy ({len(names)} names, `jbandits.names()`), "
        "written at build time from the registry and the notes in "
        "`docs/algorithm_notes/`. Each gives the rule, its paper, the defaults, the "
        "paper-vs-authors'-code variants and any departure, and its trace tests.",
        "",
    ]
    order = ["thresholding", "best-arm identification", "top-m", "cumulative regret"]
    for setting in sorted(groups, key=lambda s: (order + [s]).index(s)):
        index += [f"## {setting[0].upper() + setting[1:]}", ""]
        index += [f"* [`{n}`]({n}.md): {t}" for n, t in groups[setting]]
        index.append("")
    index += ["```{toctree}", ":hidden:", ""] + names + ["```", ""]
    (out / "index.md").write_text("\n".join(index))
    return len(names)


# -------------------------------------------------------------------------- gallery
FAMILIES = [
    # (slug, heading of the REPORT.md section, experiment-name prefixes)
    ("thresholding", "# Thresholding bandits", ("augucb", "lsa")),
    ("identification", "# Best-arm identification", ("shvar", "ugape")),
    ("regret", "# Cumulative regret", ("eucbv",)),
    (
        "fixed-confidence",
        "# Fixed-confidence best-arm identification",
        ("gk16", "shang", "russo"),
    ),
    ("full-size", "# Full-size runs", ()),
]


def _report_sections(text: str) -> dict[str, str]:
    sections: dict[str, str] = {}
    current = None
    for line in text.splitlines(keepends=True):
        if line.startswith("# "):
            current = line.strip()
            sections[current] = ""
        elif current is not None:
            sections[current] += line
    return sections


def _relink(text: str, known: set[str]) -> str:
    """Links into results/ (not part of the site) become links to gallery pages."""

    def repl(m):
        name = m.group(2)
        return f"({name}.md)" if name in known else f"(`results/{m.group(1)}`)"

    text = re.sub(
        r"\((?:\.\./)?results/((?:full/)?([\w.-]+?)(?:-quick)?/[\w.]+)\)", repl, text
    )
    return text


def _result_dir(name: str) -> tuple[pathlib.Path, str] | None:
    for sub, label in (
        (f"full/{name}", "full size"),
        (name, "full size"),
        (f"{name}-quick", "quick"),
    ):
        d = ROOT / "results" / sub
        if (d / "figure.png").exists():
            return d, label
    return None


def _meta(d: pathlib.Path) -> dict:
    try:
        return json.loads((d / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


def _runtime(name: str) -> str:
    """The wall time of the result this build shows (meta.json), else the
    experiment's own estimate, else that it was not run."""
    found = _result_dir(name)
    if found is not None:
        d, label = found
        seconds = _meta(d).get("seconds")
        if seconds is not None:
            kind = _meta(d).get("versions", {}).get("device_kind", "")
            minutes = f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"
            return f"{minutes} ({label}{', ' + kind if kind else ''})"
    return "not run for this build"


def _provenance(d: pathlib.Path) -> str:
    """Who made a result folder: its meta.json's command, time and devices."""
    try:
        meta = json.loads((d / "meta.json").read_text())
    except (OSError, ValueError):
        return ""
    parts = []
    if meta.get("command"):
        parts.append(f"`{meta['command']}`")
    if meta.get("seconds") is not None:
        parts.append(f"{meta['seconds']:.0f} s")
    versions = meta.get("versions", {})
    if versions.get("device_kind"):
        parts.append(versions["device_kind"])
    if versions.get("jax"):
        parts.append(f"jax {versions['jax']}")
    return f" ({', '.join(parts)})" if parts else ""


def _experiment_page(exp, family, full_rows, out: pathlib.Path) -> str:
    lines = [
        f"# `{exp.name}`: {exp.title}",
        "",
        f"Source: {exp.source}.",
        "",
        "## Regenerate",
        "",
        "```bash",
        f"python -m experiments run {exp.name} --quick   # reduced size",
        f"python -m experiments run {exp.name}           # the paper's size",
        "```",
        "",
        "Each run writes `results/<name>/` (`<name>-quick/` for `--quick`): "
        "`figure.png`, `table.md` (claim, our number with 95% CI, verdict, rule), "
        "`results.npz` and `meta.json`.",
    ]
    lines += ["", f"Wall time of the run shown: {_runtime(exp.name)}."]
    if exp.estimate:
        lines += [f"The experiment's own estimate: {exp.estimate}."]
    found = _result_dir(exp.name)
    lines += ["", "## Figure and claims table", ""]
    if found is None:
        lines += [
            "```{note}",
            "This build found no `results/` folder for this experiment, so it shows "
            "no figure or claims table: the docs build runs no experiment. To show "
            f"them, run `python -m experiments run {exp.name} --quick` from the "
            "repository root (or every gallery experiment at once, see the "
            "[gallery's front page](index.md)) and build again. The verdicts "
            "measured so far are in the report linked below.",
            "```",
        ]
    else:
        d, label = found
        figs = out / "_figures"
        figs.mkdir(exist_ok=True)
        shutil.copy(d / "figure.png", figs / f"{exp.name}.png")
        lines += [
            f"From `{d.relative_to(ROOT)}/` ({label}), found at build time"
            + _provenance(d)
            + ". The thick crimson curve is the paper's own algorithm; shaded "
            "bands are 95 % confidence intervals.",
            "",
            "```{container} full-width",
            f"![{exp.name}: figure](_figures/{exp.name}.png)",
            "```",
            "",
            f"{{download}}`Open the full-size image <_figures/{exp.name}.png>`",
            "",
        ]
        table = d / "table.md"
        if table.exists():
            body = table.read_text()
            # its own title and figure link: the page has both already
            body = re.sub(r"\A# .*\n", "", body)
            body = re.sub(r"^!\[[^\]]*\]\([^)]*\)\s*$", "", body, flags=re.M)
            body = re.sub(r"^#+ ", "### ", body, flags=re.M)
            lines += [body]
    if full_rows:
        lines += [
            "",
            "## Full-size run (experiments/REPORT.md)",
            "",
            "| experiment | size | wall | CPU | peak RSS | verdicts |",
            "|---|---|---|---|---|---|",
            *full_rows,
        ]
    if family:
        lines += [
            "",
            "## Verdicts and decisions",
            "",
            f"The claims, verdicts at quick and full size, and the decisions for this "
            f"family are in [the report's section]({family}.md); full-size runs in "
            "[Full-size runs](full-size.md).",
        ]
    return "\n".join(lines) + "\n"


# measured: the quick runs of docs/gallery-quick.txt in one process (their meta.json)
QUICK_NOTE = (
    "17.1 min for the 19 on 2 CPU cores shared with other work at load 8-12, "
    "compile cache cold, 2026-12-02"
)


def write_gallery(out: pathlib.Path) -> int:
    import experiments
    from experiments import _core

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    for info in pkgutil.iter_modules(experiments.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"experiments.{info.name}")
    exps = dict(sorted(_core.EXPERIMENTS.items()))
    known = set(exps)
    report = (ROOT / "experiments" / "REPORT.md").read_text()
    sections = _report_sections(report)
    pages = []
    for slug, heading, _ in FAMILIES:
        key = next((h for h in sections if h.startswith(heading)), None)
        if key is None:
            raise RuntimeError(f"experiments/REPORT.md has no section {heading!r}")
        body = _relink(sections[key], known)
        (out / f"{slug}.md").write_text(
            f"# Report: {key[2:]}\n\nFrom `experiments/REPORT.md`.\n{body}"
        )
        pages.append(slug)
    full_key = next(h for h in sections if h.startswith("# Full-size runs"))
    rows = [
        line.rstrip()
        for line in sections[full_key].splitlines()
        if line.startswith("| ") and not line.startswith("| experiment")
    ]
    for name, exp in exps.items():
        family = next(
            (s for s, _, pre in FAMILIES if any(name.startswith(p) for p in pre)),
            None,
        )
        mine = [_relink(r, known) for r in rows if re.match(rf"\| {name}( |\|)", r)]
        (out / f"{name}.md").write_text(_experiment_page(exp, family, mine, out))
    intro = _relink(sections.get("# Experiments report", ""), known)
    shown = [n for n in exps if _result_dir(n) is not None]
    index = [
        "# Reproductions gallery",
        "",
        f"{len(exps)} experiments reproduce figures and claims of the papers "
        "(`python -m experiments list`). Each page gives the command that regenerates "
        "it, its figure and claims table when this build found them in `results/`, "
        "and the verdicts from `experiments/REPORT.md`.",
        "",
        "```{note}",
        f"This build found results for {len(shown)} of {len(exps)} experiments. The "
        "docs build runs no experiment; to show the figures and claims tables of "
        "the quick runs, run them from the repository root before building "
        "(`.ci/run` does):",
        "",
        "    python -m experiments run $(cat docs/gallery-quick.txt) --quick --quiet",
        "",
        f"({QUICK_NOTE}). A build shows whatever `results/` holds (quick, full size, "
        "or `results/full/`, the largest found).",
        "```",
        intro,
        "## Experiments",
        "",
        "The runtime is the wall time recorded in the `meta.json` of the result "
        "shown (quick runs: one `python -m experiments run` process for all of "
        "them, so an experiment listed after another that compiled the same "
        "programs, e.g. the AugUCB figures after `augucb-ablation`, reuses them).",
        "",
        "| experiment | title | runtime |",
        "| --- | --- | --- |",
    ]
    index += [
        f"| [`{n}`]({n}.md) | {e.title} | {_runtime(n)} |" for n, e in exps.items()
    ]
    index += ["", "## Report sections", ""]
    index += [f"* [{sections_title(sections, h)}]({s}.md)" for s, h, _ in FAMILIES]
    index += ["", "```{toctree}", ":hidden:", ""] + list(exps) + pages + ["```", ""]
    (out / "index.md").write_text("\n".join(index))
    return len(exps)


def sections_title(sections: dict[str, str], heading: str) -> str:
    key = next(h for h in sections if h.startswith(heading))
    return key[2:]


# ------------------------------------------------------------------------ notebooks
def write_notebooks(out: pathlib.Path) -> int:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for p in paths:
        shutil.copy(p, out / p.name)
    return len(paths)


def main() -> None:
    api = write_api(DOCS / "api")
    n_alg = write_algorithms(DOCS / "algorithms")
    n_exp = write_gallery(DOCS / "gallery")
    n_nb = write_notebooks(DOCS / "notebooks")
    n_api = sum(n for _, _, n in api)
    print(
        f"[docs] generated: {n_api} API names in {len(api)} modules, {n_alg} "
        f"algorithm pages, {n_exp} experiment pages, {n_nb} notebooks"
    )


if __name__ == "__main__":
    main()
