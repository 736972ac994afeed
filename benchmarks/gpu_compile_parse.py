"""What a GPU program launches and what each kernel costs, read from XLA's and ptxas' own
reports (the parsing half of :mod:`benchmarks.gpu_compile`; pure functions, no JAX).

* **ptxas -v** (printed on stderr with ``TF_CPP_MIN_LOG_LEVEL=0
  TF_CPP_VMODULE=subprocess_compilation=3``): per entry function, registers per
  thread, stack frame, spill stores and loads (:func:`ptxas_report`).
* **the thunk sequence** (``XLA_FLAGS=--xla_dump_to=DIR``, the file
  ``*.thunk_sequence_after_thunk_passes.txt``): one line per thunk the GPU executable
  runs, loop conditions, loop bodies and conditional branches nested under their
  ``kWhile`` / ``kConditional`` (:func:`parse_thunks`). Every thunk but the
  containers (loops, conditionals, command buffers, sequences) is one launch: a
  kernel, or a device copy (``kCopy``, counted apart). The sequence does not print a
  loop's trip count: ``*.thunk_metadata.txt`` names each thunk by its HLO
  instruction (:func:`thunk_names`) and the optimised HLO gives each ``while`` its
  known trip count (:func:`trip_counts`).

:func:`xla_counts` finds the engine's loops (:mod:`jbandits.sim.segments`): the
*step loops* (``lax.scan`` of ``segment`` steps: the unguarded one once, the guarded
one twice, in the segment's branch and in its redo), the *segment loop* around them
(``lax.while_loop`` over segments, trip count unknown), and counts the launches of a
step (with its loop's condition), of a segment outside its steps (each conditional
by its largest branch), of the segment loop's condition and of the rest of the
program (once per chunk).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

CONTAINERS = ("kWhile", "kConditional", "kCommandBuffer", "kSequential")
COPIES = ("kCopy",)

_FIELDS = ("registers", "stack", "spill_stores", "spill_loads")
_THUNK = re.compile(r"^(\s*)(\d+): (k\w+)\s+\[[^\]]*\]\s*(\S*)")
_LABEL = re.compile(r"^(\s*)(\w+):\s*$")


# ------------------------------------------------------------------------ ptxas -v
def ptxas_report(stderr: str) -> dict[str, dict]:
    """Entry function -> ``{"registers", "stack", "spill_stores", "spill_loads"}``
    (bytes) from ptxas' ``-v`` report in ``stderr``. A function compiled more than
    once keeps its largest numbers."""
    out: dict[str, dict] = {}
    current = None
    for line in stderr.splitlines():
        m = re.search(
            r"spilled to local memory in function '([^']+)', (\d+) bytes spill "
            r"stores, (\d+) bytes spill loads",
            line,
        )
        if m:  # --warn-on-spills, before the function's report
            row = out.setdefault(m.group(1), dict.fromkeys(_FIELDS, 0))
            row["spill_stores"] = max(row["spill_stores"], int(m.group(2)))
            row["spill_loads"] = max(row["spill_loads"], int(m.group(3)))
            continue
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            out.setdefault(current, dict.fromkeys(_FIELDS, 0))
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = m.group(1)
            continue
        if current is None or current not in out:
            continue
        row = out[current]
        m = re.search(
            r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
            line,
        )
        if m:
            for k, v in zip(
                ("stack", "spill_stores", "spill_loads"), m.groups(), strict=True
            ):
                row[k] = max(row[k], int(v))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            row["registers"] = max(row["registers"], int(m.group(1)))
    return out


# ------------------------------------------------------------------ thunk sequence
@dataclass
class Thunk:
    """One line of the thunk sequence: its kind (``kCustomKernel``, ``kWhile``, ...),
    the kernel's name (a kernel) or the kind (a copy), its number, and for a
    container its nested thunks by section (``condition``, ``body``,
    ``true_branch``, ``branch_0``, ...; ``""`` for a command buffer's)."""

    kind: str
    name: str
    number: int
    sections: dict = field(default_factory=dict)
    _open: str = ""

    @property
    def launch(self) -> bool:
        return self.kind not in CONTAINERS


def parse_thunks(text: str) -> list[Thunk]:
    """The top-level thunks of a ``*.thunk_sequence_after_thunk_passes.txt``, nested
    by indentation. (XLA prints a nested loop's ``condition:`` label without its
    indentation: it belongs to the ``kWhile`` just above it.)"""
    top: list[Thunk] = []
    stack: list[tuple[int, Thunk]] = []
    last = None
    for line in text.splitlines():
        m = _THUNK.match(line)
        if m:
            indent = len(m.group(1))
            node = Thunk(m.group(3), m.group(4) or m.group(3), int(m.group(2)))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if stack:
                parent = stack[-1][1]
                parent.sections.setdefault(parent._open, []).append(node)
            else:
                top.append(node)
            if not node.launch:
                stack.append((indent, node))
            last = node
            continue
        # an empty section prints "No thunks." and the next label on one line
        m = _LABEL.match(line.replace("No thunks.", "", 1))
        if not m:
            continue
        label = m.group(2)
        if label == "condition" and last is not None and last.kind == "kWhile":
            last._open = label
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack:
            stack[-1][1]._open = label
    return top


def thunk_names(metadata: str) -> dict[int, str]:
    """Thunk number -> its HLO instruction (``profile_annotation``) from a
    ``*.thunk_metadata.txt``."""
    out = {}
    for block in re.findall(r"thunk_info \{(.*?)\}", metadata, re.S):
        name = re.search(r'profile_annotation: "([^"]*)"', block)
        number = re.search(r"thunk_id: (\d+)", block)
        if name and number:
            out[int(number.group(1))] = name.group(1)
    return out


def trip_counts(hlo_text: str) -> dict[str, int | None]:
    """``while`` instruction -> its known trip count (None: not known) in HLO text."""
    out = {}
    for m in re.finditer(r"%(\S+) = .*? while\((.*)$", hlo_text, re.M):
        n = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', m.group(2))
        out[m.group(1)] = int(n.group(1)) if n else None
    return out


def pallas_kernels(hlo_text: str) -> list[str]:
    """Names of the Pallas (Triton) kernels an optimised GPU HLO module calls."""
    names = []
    for line in hlo_text.splitlines():
        if "__gpu$xla.gpu.triton" in line:
            m = re.search(r'\bname = \\?"([^"\\]+)', line)
            if m and m.group(1) not in names:
                names.append(m.group(1))
    return names


# ------------------------------------------------------------------------ counting
def launches(nodes, trips, skip=frozenset(), apart=False) -> Counter:
    """Launches of one execution of ``nodes``: ``kernel`` and ``copy``. A loop of
    known trip count counts its condition and body that many times; one of unknown
    trip count (data-dependent, e.g. a stage end) its condition and its body once. A
    conditional counts its largest branch. With ``apart`` (a step, where a branch or
    a data-dependent loop runs on few steps: a phase end, a rare fall-back) the
    largest branch is counted under ``"branch"`` and a data-dependent loop's body
    under ``"rare"`` instead, as ``benchmarks/hlo.py`` reports them. ``trips``: thunk
    number -> trip count; ``kWhile`` thunks numbered in ``skip`` are left out."""
    out: Counter = Counter()
    for node in nodes:
        if node.kind == "kWhile" and node.number in skip:
            continue
        if node.launch:
            out["copy" if node.kind in COPIES else "kernel"] += 1
        elif node.kind == "kConditional":
            branches = [launches(b, trips, skip, apart) for b in node.sections.values()]
            if branches:
                largest = max(branches, key=_all)
                if apart:
                    out["branch"] += _all(largest)
                else:
                    out.update(largest)
        elif node.kind == "kWhile":
            out_cond = launches(node.sections.get("condition", []), trips, skip, apart)
            body = launches(node.sections.get("body", []), trips, skip, apart)
            n = trips.get(node.number)
            if n is None:
                out.update(out_cond)  # tested each time the loop is reached
                if apart:
                    out["rare"] += _all(body)
                else:
                    out.update(body)
                continue
            for k, v in (out_cond + body).items():
                out[k] += n * v
        else:
            for nested in node.sections.values():
                out.update(launches(nested, trips, skip, apart))
    return out


def _all(c) -> int:
    return c["kernel"] + c["copy"] + c["branch"] + c["rare"]


def _walk(nodes, path=()):
    for node in nodes:
        yield node, path
        for nested in node.sections.values():
            yield from _walk(nested, (*path, node))


def _signature(node: Thunk) -> tuple:
    body = [n for n, _ in _walk(node.sections.get("body", [])) if n.launch]
    return tuple(sorted(re.sub(r"[._]\d+$", "", n.name) for n in body))


def xla_counts(thunks: str, metadata: str, hlo_text: str, segment: int) -> dict:
    """Launches of the engine's program (see the module docstring): ``step`` (the
    unguarded step's loop body, None if there is none), ``guarded``,
    ``step_condition`` (the step loop's condition, which also runs every step),
    ``segment`` (per segment,
    outside its steps), ``condition`` (the segment loop's) and ``chunk`` (outside
    the segment loop); each a ``{"kernel", "copy"}`` dict. ``segment``: the steps of
    the step loops (their known trip count).

    Raises:
      ValueError: no loop of ``segment`` trips in the program.
    """
    top = parse_thunks(thunks)
    names = thunk_names(metadata)
    by_name = trip_counts(hlo_text)
    trips = {
        n.number: by_name.get(names.get(n.number, ""))
        for n, _ in _walk(top)
        if n.kind == "kWhile"
    }
    steps = [
        (n, p)
        for n, p in _walk(top)
        if n.kind == "kWhile" and trips[n.number] == segment
    ]
    if not steps:
        raise ValueError(f"no {segment}-trip loop in the thunk sequence")
    skip = frozenset(n.number for n, _ in steps)
    kinds = Counter(_signature(n) for n, _ in steps)
    per_kind = {}
    for n, _ in steps:  # the body (the step loop's condition: one more each step)
        body = n.sections.get("body", [])
        per_kind.setdefault(_signature(n), launches(body, trips, apart=True))
    # the guarded step runs in the segment's branch and in its redo: it appears twice
    order = sorted(kinds, key=lambda s: (kinds[s] > 1, _all(per_kind[s])))
    step = per_kind[order[0]]  # one step loop only (no guard): it is the step
    guarded = per_kind[order[-1]] if len(order) > 1 else None
    outer = next((w for _, p in steps for w in reversed(p) if w.kind == "kWhile"), None)
    first = steps[0][0].sections.get("condition", [])
    out = {"step": _pair(step), "guarded": _pair(guarded), "step_loops": len(steps)}
    out["step_condition"] = _pair(launches(first, trips, apart=True))
    if outer is None:
        out.update(
            segment=None, condition=None, chunk=_pair(launches(top, trips, skip))
        )
        return out
    out["condition"] = _pair(launches(outer.sections.get("condition", []), trips))
    out["segment"] = _pair(launches(outer.sections.get("body", []), trips, skip))
    out["chunk"] = _pair(launches(top, trips, frozenset({*skip, outer.number})))
    return out


def _pair(c) -> dict | None:
    if c is None:
        return None
    out = {"kernel": c["kernel"], "copy": c["copy"]}
    out.update({k: c[k] for k in ("branch", "rare") if c[k]})
    return out


def fmt(pair: dict | None) -> str:
    """``"10+1c"``: kernels plus device copies, then ``(+4b)`` the largest branch of
    a conditional and ``(+6d)`` the body of a data-dependent loop inside a step (run
    on few steps); ``"-"`` for None."""
    if pair is None:
        return "-"
    out = f"{pair['kernel']}+{pair['copy']}c" if pair["copy"] else str(pair["kernel"])
    if pair.get("branch"):
        out += f" (+{pair['branch']}b)"
    if pair.get("rare"):
        out += f" (+{pair['rare']}d)"
    return out
