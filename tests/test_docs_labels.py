"""What a reader sees names the papers, not our internal files: the hand-written docs
pages, the algorithm notes and the docstrings that reach the API pages carry no label
of the project's own spec files (``algorithms-*.md``, ``thresholding-authors-code.md``,
"spec §4.2", ambiguity numbers "AMB-10") and no seed label ("S004", "seed 001"). A
reader cannot open those files; cite the paper (authors, venue, year, section).

The same holds for the gallery's text, which docs/generate.py takes from the
experiments (their strings: sources, claims, notes) and experiments/REPORT.md."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PACKAGE = ROOT / "jbandits"

# docs/ pages written by hand (docs/generate.py writes algorithms/, gallery/, the API
# lists and notebooks/ at build time from the notes, the docstrings and experiments/)
GENERATED = ("algorithms", "gallery", "notebooks", "jupyter_execute", "_build")

LABELS = re.compile(
    r"(?i:algorithms-[a-z-]+\.md"
    r"|thresholding-authors-code"
    r"|\bspec\b\W{0,3}§"  # "spec §6", "spec (§7)"
    r"|\bspec\s+sections?\s+\d"
    r"|\bthe spec\b"
    r"|\bspec file\b"
    r"|\bAMB-\d+"
    r"|\bseeds? 00[0-4]\b"
    r"|\bseed text\b"
    r"|\bspec\s+(?:appendix|\d)"  # "spec Appendix A", "(spec 0.6093)"
    r"|\(spec[:)]"  # "(spec: do not copy)"
    # the spec's source tags (Faella et al.; the C-RAD transcription; ...)
    r"|\bR-(?:FFS|ABM|GAB11|KKS|BWV|CSAR|CLZ|UGTR)\b|\bC-(?:RAD|BPL)\b)"
    # upper case only: ``"s004"`` is the removed name of a variant, refused by name
    r"|\bS00[0-4]\b"
)


# the experiments and their report also name no path into the spec folder (the
# contributor guides still point contributors there: not scanned for this)
EXPERIMENT_LABELS = re.compile(LABELS.pattern + r"|\bshared/spec/")


def _hits(text, labels=LABELS):
    return sorted({m.group(0) for m in labels.finditer(text)})


def _pages():
    for path in sorted(DOCS.rglob("*.md")):
        parts = path.relative_to(DOCS).parts
        if parts[0] in GENERATED or (parts[0] == "api" and path.name != "index.md"):
            continue
        yield path
    yield ROOT / "README.md"


def _docstrings(path):
    """The module's docstring and those of its public classes, functions and methods."""
    tree = ast.parse(path.read_text())
    found = [("module", ast.get_docstring(tree))]
    stack = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if child.name.startswith("_") and child.name != "__init__":
                    continue
                name = prefix + child.name
                found.append((name, ast.get_docstring(child)))
                if isinstance(child, ast.ClassDef):
                    stack.append((child, name + "."))
    return [(name, doc) for name, doc in found if doc]


def test_labels_pattern_catches_the_labels_and_spares_plain_words():
    for text in (
        "Spec: `algorithms-pure-exploration.md` §4.2.",
        "see `thresholding-authors-code.md` §1",
        "as in the paper (spec §6)",
        "as the spec (§7) restates it",
        "(ambiguity AMB-10)",
        "Source: seed 001 (Tao et al.)",
        "the S004 experiments",
        "Shang's code; spec\n  section 10)",
        "(spec Appendix A)",
        "not copied (spec: do not copy)",
        "paper-form a = 0.6087 (spec 0.6093)",
        "superset of spec\n§4/A4",
        "[spec file] UCBE a_code = 9.969",
        "not in the seed text",
        "(R-FFS unavailable)",
    ):
        assert _hits(text), text
    assert _hits("Specs: `shared/spec/algorithms-regret.md`", EXPERIMENT_LABELS)
    assert _hits("`../shared/spec/` §4", EXPERIMENT_LABELS)
    for text in (
        "a registered policy is rebuilt from its spec",
        "Lalitha et al., UAI 2023, Section 5",
        "policy.spec is None",
        "S0040 and AMBER",
        'variant ``"s004"`` (removed in 0.2.0) raises',
        "the instance seed 0 (numpy.random.default_rng(seed))",
        "R-squared, C-level, spec=None",
    ):
        assert not _hits(text), text


def test_docs_pages_and_algorithm_notes_cite_papers_not_spec_files():
    bad = {}
    for path in _pages():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _hits(line):
                bad[f"{path.relative_to(ROOT)}:{number}"] = _hits(line)
    assert not bad, f"internal spec/seed labels in the docs (cite the paper): {bad}"


def test_public_docstrings_cite_papers_not_spec_files():
    bad = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name, doc in _docstrings(path):
            if _hits(doc):
                bad[f"{path.relative_to(ROOT)}:{name}"] = _hits(doc)
    assert not bad, f"internal spec/seed labels in docstrings (cite the paper): {bad}"


EXPERIMENTS = ROOT / "experiments"


def _strings(path):
    """(line, text) of every string constant of a module: docstrings, notes, claims
    and table text, and the literal parts of f-strings."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def _report_sections():
    """experiments/REPORT.md cut at its top-level headings: {heading: (first line, text)}."""
    sections, heading, start = {}, "", 1
    lines = (EXPERIMENTS / "REPORT.md").read_text().splitlines(keepends=True)
    for number, line in enumerate(lines, 1):
        if line.startswith("# "):
            heading, start = line.strip(), number
        first, text = sections.get(heading, (start, ""))
        sections[heading] = (first, text + line)
    return sections


def test_experiment_strings_cite_papers_not_spec_files():
    modules = sorted(EXPERIMENTS.glob("*.py"))
    assert len(modules) > 10
    bad = {}
    for path in modules:
        for number, text in _strings(path):
            if _hits(text, EXPERIMENT_LABELS):
                bad[f"{path.relative_to(ROOT)}:{number}"] = _hits(
                    text, EXPERIMENT_LABELS
                )
    assert not bad, f"internal spec/seed labels in experiments/ (cite the paper): {bad}"


def test_experiments_report_cites_papers_not_spec_files():
    sections = _report_sections()
    assert any(h.startswith("# Thresholding bandits") for h in sections)
    bad = {}
    for first, text in sections.values():
        for m in EXPERIMENT_LABELS.finditer(text):
            number = first + text.count("\n", 0, m.start())
            bad.setdefault(f"experiments/REPORT.md:{number}", []).append(m.group(0))
    assert not bad, f"internal spec/seed labels in experiments/REPORT.md: {bad}"
