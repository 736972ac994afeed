"""Compile the programs ``jbandits.simulate`` would run on an H100, here, without a GPU,
and report what they launch and what their kernels cost.

    pip install -e ".[gpu-compile]"
    python -m benchmarks.gpu_compile [--policy NAME ...] [--arms K ...]
        [--backend xla fused] [--lanes N | --arm-lanes A] [--lab [FILE]]
        [--json OUT] [--keep DIR] [--stderr] [--timeout S] [--jobs N] [--check]
    python -m benchmarks.gpu_compile --from OUT.json ... [--keep DIR]   (saved rows)

Per row (policy x backend x K; a policy as ``name``, ``name:variant`` or
``name:k=v,...``, see :func:`benchmarks.gpu_compile_child.make_policy`), in a process
of its own (:mod:`benchmarks.gpu_compile_child`, ``--timeout`` seconds at most): the
runner's chunk program for a ``cuda`` device (``Execution.for_platform("gpu")``, the
row's backend), compiled ahead of time for an H100 (``benchmarks/gpu_h100.txtpb``)
with ``XLA_FLAGS=--xla_dump_to`` and ptxas' ``-v`` report on stderr
(``TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=subprocess_compilation=3``). Reported, from
XLA's own thunk sequence and ptxas' own report (:mod:`benchmarks.gpu_compile_parse`):

* ``status``: compiled, refused (the fused backend declined, with its reason: not a
  failure), error (the first line), timeout;
* XLA rows: launches per step, unguarded / guarded (the step loop's body: its
  condition adds one kernel per step; ``(+Nb)`` a conditional's largest branch and
  ``(+Nd)`` a data-dependent loop's body inside the step, run on few steps), per
  segment of 32 steps outside them (each conditional by its largest branch), of the
  segment loop's condition, and of the rest of the chunk (once); ``N+Mc``: N
  kernels and M device copies;
* fused rows: the Pallas kernel's registers per thread, stack frame, spill stores and
  loads (bytes), its PTX size; the XLA launches around it per chunk; lanes per
  kernel program x warps;
* compile seconds (lowering and compilation, in the child).

``--twins`` adds, for each policy that has one, its plain-JAX twin
(:mod:`benchmarks.plain_twins`: vmap + fori_loop, the same reward stack; row
``twin NAME``, backend ``plain``), whose kernels per step the policy's are compared
with. ``--lab`` adds the lab kernel (``../shared/lab/fused_apt_ceiling.py``: APT in one
Pallas kernel, 16 lanes x 4 warps, K = 10 and 100) and its plain-JAX twin, for the
target side by side. ``--keep DIR`` (or an ``--xla_dump_to`` in ``XLA_FLAGS``) keeps
each row's dump in ``DIR/<row>/`` and its stderr in ``DIR/<row>.stderr``; other
``XLA_FLAGS`` pass through; ``--stderr`` echoes each child's stderr. ``--check``:
exit status 1 if a row failed to compile (error, timeout) or a Pallas kernel the
fused backend accepted spills. Nothing runs: this is what a program will launch,
not how fast it runs.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from benchmarks import gpu_compile_parse as parse
from benchmarks.gpu_compile_child import MARK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB = os.path.join(ROOT, "..", "shared", "lab", "fused_apt_ceiling.py")
EXTRA = ("thompson:gauss", "bayes_ucb:gauss")  # variants beside the registered names
CI = ("apt", "ucb1", "thompson:gauss", "sequential_halving", "track_and_stop")


def lanes_for(num_arms: int, arm_lanes: float, multiple: int = 2) -> int:
    """A chunk of about ``arm_lanes`` arm-lanes: lanes rounded up to ``multiple``
    (the runner's chunks hold an even number of lanes from 16 lanes)."""
    lanes = -(-int(arm_lanes) // num_arms)
    return max(multiple, -(-lanes // multiple) * multiple)


def rows_for(args) -> list[dict]:
    """The rows to compile, in order."""
    import jbandits

    names = args.policy
    if names is None:
        names = [*sorted(jbandits.names()), *EXTRA]
    rows = []
    for name in names:
        for backend in args.backend:
            for k in args.arms:
                lanes = args.lanes or lanes_for(k, args.arm_lanes)
                rows.append(dict(label=name, backend=backend, arms=k, lanes=lanes))
    if getattr(args, "twins", False):
        from benchmarks.plain_twins import TWINS

        for name in (n for n in names if n in TWINS):
            for k in args.arms:
                lanes = args.lanes or lanes_for(k, args.arm_lanes)
                rows.append(dict(label=f"twin {name}", backend="plain", arms=k,
                                 lanes=lanes))  # fmt: skip
    if args.lab:
        for k in (10, 100):
            lanes = lanes_for(k, args.arm_lanes, 16)
            for label in ("lab fused", "lab plain"):
                rows.append(
                    dict(label=label, backend=label.split()[1], arms=k, lanes=lanes,
                         block=16, warps=4, lab=args.lab)
                )  # fmt: skip
    return rows


def _slug(row: dict) -> str:
    return re.sub(
        r"[^A-Za-z0-9_.=-]+", "_", f"{row['label']}-{row['backend']}-K{row['arms']}"
    )


def _env(dump: str) -> dict:
    """The child's environment: the user's, JAX on CPU, XLA dumping to ``dump`` (a
    user's ``--xla_dump_to`` replaced; other flags kept), ptxas' ``-v`` logged."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", JBANDITS_PROGRESS="0")
    flags = re.sub(r"--xla_dump_to=\S+", "", env.get("XLA_FLAGS", "")).split()
    env["XLA_FLAGS"] = " ".join([*flags, f"--xla_dump_to={dump}"])
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"
    vmodule = env.get("TF_CPP_VMODULE", "")
    if "subprocess_compilation" not in vmodule:
        vmodule = ",".join(x for x in (vmodule, "subprocess_compilation=3") if x)
    env["TF_CPP_VMODULE"] = vmodule
    return env


def _module_file(dump: str, module: str, suffix: str) -> str | None:
    """The last ``module_NNNN.<module>.<suffix>`` in ``dump``."""
    found = sorted(
        f for f in os.listdir(dump) if f.endswith(f".{module}.{suffix}")
    )  # fmt: skip
    return os.path.join(dump, found[-1]) if found else None


def _read(path: str | None) -> str:
    if path is None:
        return ""
    with open(path, errors="replace") as f:
        return f.read()


def _ptx_bytes(dump: str, kernel: str) -> int | None:
    entry = f".entry {kernel}("
    for name in sorted(os.listdir(dump)):
        if name.endswith(".ptx"):
            text = _read(os.path.join(dump, name))
            if entry in text:
                return len(text.encode())
    return None


def measure(row: dict, dump: str, stderr: str, result: dict) -> dict:
    """The row's counts from the child's dump directory and stderr."""
    out = dict(row, **result)
    versions = re.findall(r"ptxas with version (\S+)", stderr)
    out["ptxas"] = versions[-1] if versions else None
    if result.get("status") != "compiled":
        return out
    module = result["module"]
    hlo_text = _read(_module_file(dump, module, "sm_9.0a_gpu_after_optimizations.txt"))
    thunks = _read(
        _module_file(dump, module, "thunk_sequence_after_thunk_passes.txt")
        or _module_file(dump, module, "thunk_sequence.txt")
    )
    meta = _read(_module_file(dump, module, "thunk_metadata.txt"))
    report = parse.ptxas_report(stderr)
    pallas = parse.pallas_kernels(hlo_text)
    if pallas:
        worst = max(pallas, key=lambda n: report.get(n, {}).get("registers", 0))
        out["kernel"] = worst
        out.update(report.get(worst, {}))
        out["ptx_bytes"] = _ptx_bytes(dump, worst)
        chunk = parse.launches(parse.parse_thunks(thunks), {})
        out["chunk"] = {"kernel": chunk["kernel"], "copy": chunk["copy"]}
        out["pallas_kernels"] = len(pallas)
    else:
        try:
            out.update(parse.xla_counts(thunks, meta, hlo_text, result["loop_trips"]))
        except ValueError as err:
            out["count_error"] = str(err)
    xla = {n: r for n, r in report.items() if n not in pallas}
    out["xla_kernels_compiled"] = len(xla)
    out["xla_spill_bytes"] = sum(
        r["spill_stores"] + r["spill_loads"] for r in xla.values()
    )
    return out


def run_row(row: dict, args) -> dict:
    """Compile ``row`` in a child process; its measured row."""
    keep = args.keep
    dump = (
        os.path.join(keep, _slug(row))
        if keep
        else tempfile.mkdtemp(prefix="gpu-compile-")
    )
    if keep:
        shutil.rmtree(dump, ignore_errors=True)
        os.makedirs(dump)
    cmd = [sys.executable, "-m", "benchmarks.gpu_compile_child", json.dumps(row)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=_env(dump), capture_output=True, text=True,
            timeout=args.timeout,
        )  # fmt: skip
        stdout, stderr = proc.stdout, proc.stderr
        lines = [x for x in stdout.splitlines() if x.startswith(MARK)]
        if lines:
            result = json.loads(lines[-1][len(MARK) :])
        else:
            rc = proc.returncode
            said = [x for x in stderr.splitlines() if x.strip() and x[0] not in "*IW "]
            why = f"crashed ({signal.Signals(-rc).name})" if rc < 0 else f"exit {rc}"
            result = {"status": "error", "error": f"{why}: {(said or [''])[-1]}"}
        if result["status"] == "error":  # the compiler's own first error line
            said = re.search(r"\berror: (.*)", stderr)
            if said:
                result["error"] += f" ({said.group(1)})"
            result["error"] = result["error"][:300]
    except subprocess.TimeoutExpired as err:
        stdout, stderr = "", (err.stderr or b"")
        stderr = (
            stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
        )
        result = {"status": "timeout", "error": f"over {args.timeout} s"}
    if args.stderr:
        sys.stderr.write(stderr)
    try:
        out = measure(row, dump, stderr, result)
    finally:
        if keep:
            with open(dump + ".stderr", "w") as f:
                f.write(stderr)
        else:
            shutil.rmtree(dump, ignore_errors=True)
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def failures(rows: list[dict]) -> list[str]:
    """What ``--check`` fails on: a row that did not compile (error, timeout) and a
    Pallas kernel of a compiled fused row that spills (a refusal is not a failure)."""
    bad = []
    for r in rows:
        name = f"{r['label']} {r['backend']} K={r['arms']}"
        if r["status"] in ("error", "timeout"):
            bad.append(f"{name}: {r['status']}: {r.get('error', '')}")
        elif (
            r["status"] == "compiled"
            and r.get("kernel")
            and not r["label"].startswith("lab ")
        ):
            spilled = r.get("spill_stores", 0) + r.get("spill_loads", 0)
            if spilled:
                bad.append(f"{name}: {r['kernel']} spills {spilled} bytes")
        if r["status"] == "compiled" and r.get("count_error"):
            bad.append(f"{name}: {r['count_error']}")
    return bad


HEADER = (
    "| policy | backend | K | lanes | status | step (unguarded / guarded) | segment "
    "| condition | chunk | regs | stack | spill st / ld | PTX KB | compile s |"
)


def table_row(r: dict) -> str:
    """One markdown row of ``r``."""
    fmt = parse.fmt
    status = r["status"]
    if status != "compiled":
        note = (r.get("reason") or r.get("error") or "").replace("|", "/")
        return (
            f"| {r['label']} | {r['backend']} | {r['arms']} | {r['lanes']} | {status}: "
            f"{note} | | | | | | | | | |"
        )
    if r.get("kernel"):
        shape = f" ({r['block']}x{r['warps']})" if r.get("block") else ""
        ptx = f"{r['ptx_bytes'] / 1024:.0f}" if r.get("ptx_bytes") else "?"
        return (
            f"| {r['label']} | {r['backend']}{shape} | {r['arms']} | {r['lanes']} | "
            f"compiled | - | - | - | {fmt(r['chunk'])} | {r['registers']} | "
            f"{r['stack']} | {r['spill_stores']} / {r['spill_loads']} | {ptx} | "
            f"{r['seconds']} |"
        )
    if r.get("count_error"):
        steps = f"? ({r['count_error']})"
    else:
        steps = f"{fmt(r.get('step'))} / {fmt(r.get('guarded'))}"
    return (
        f"| {r['label']} | {r['backend']} | {r['arms']} | {r['lanes']} | compiled | "
        f"{steps} | {fmt(r.get('segment'))} | {fmt(r.get('condition'))} | "
        f"{fmt(r.get('chunk'))} | | | | | {r['seconds']} |"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.gpu_compile")
    ap.add_argument("--policy", nargs="*", help="names (default: all registered)")
    ap.add_argument("--ci", action="store_true", help=f"the CI subset: {', '.join(CI)}")
    ap.add_argument("--arms", type=int, nargs="+", default=[16, 128])
    ap.add_argument(
        "--backend",
        nargs="+",
        default=["xla", "fused"],
        choices=["xla", "fused", "auto"],
    )
    ap.add_argument(
        "--lanes", type=int, help="lanes per chunk (default: from --arm-lanes)"
    )
    ap.add_argument("--arm-lanes", type=float, default=1e5)
    ap.add_argument("--lab", nargs="?", const=LAB, help="add the lab kernel's rows")
    ap.add_argument(
        "--twins",
        action="store_true",
        help="add the plain-JAX twin of each policy that has one "
        "(benchmarks/plain_twins.py)",
    )
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--keep", help="keep each row's XLA dump and stderr here")
    ap.add_argument("--stderr", action="store_true", help="echo each child's stderr")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per row")
    ap.add_argument("--jobs", type=int, default=1, help="rows compiled at once")
    ap.add_argument(
        "--check", action="store_true", help="exit 1 on an error or a spill"
    )
    ap.add_argument("--from", dest="saved", nargs="+", help="print saved --json rows")
    args = ap.parse_args(argv)
    if args.saved:
        return print_saved(args.saved, args.keep)
    if args.ci:
        args.policy = list(CI)
    user_dump = re.search(r"--xla_dump_to=(\S+)", os.environ.get("XLA_FLAGS", ""))
    if args.keep is None and user_dump:
        args.keep = user_dump.group(1)
    if args.keep:
        args.keep = os.path.abspath(args.keep)
        os.makedirs(args.keep, exist_ok=True)
    if args.lab and not os.path.exists(args.lab):
        print(f"no lab kernel at {args.lab}: lab rows left out", file=sys.stderr)
        args.lab = None
    rows = rows_for(args)
    started = _context()
    print(started["line"], flush=True)
    print(HEADER)
    print("|" + " --- |" * (HEADER.count(" | ") + 1), flush=True)
    done = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for result in pool.map(lambda row: run_row(row, args), rows):
            done.append(result)
            print(table_row(result), flush=True)
            if args.json:
                _write(args.json, started, done)
    bad = failures(done)
    ptxas = sorted({r["ptxas"] for r in done if r.get("ptxas")})
    print(f"\nptxas {', '.join(ptxas) or '?'}; load {_load()} at the end")
    for line in bad:
        print(f"FAILED {line}")
    return 1 if (args.check and bad) else 0


def print_saved(paths: list[str], keep: str | None = None) -> int:
    """The table of rows saved with ``--json`` (several files: their rows in order);
    with ``keep``, each row counted again from its dump and stderr kept there."""
    rows = []
    for path in paths:
        with open(path) as f:
            saved = json.load(f)
        print(f"{path}: {saved['line']}; load {saved.get('load_now', '?')} at its end")
        rows += saved["rows"]
    if keep:
        for n, r in enumerate(rows):
            dump = os.path.join(keep, _slug(r))
            if os.path.isdir(dump):
                rows[n] = dict(
                    measure(r, dump, _read(dump + ".stderr"), r), wall_s=r.get("wall_s")
                )
    print(HEADER)
    print("|" + " --- |" * (HEADER.count(" | ") + 1))
    for r in rows:
        print(table_row(r))
    return 0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _context() -> dict:
    import jax

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
            text=True, check=False,
        ).stdout.strip()  # fmt: skip
    except OSError:
        commit = ""
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    line = (
        f"{date}; commit {commit or '?'}; jax {jax.__version__}; {os.cpu_count()} CPUs, "
        f"load {_load()}; deviceless compiles for an H100 (sm_90a), nothing run"
    )
    return {"date": date, "commit": commit, "jax": jax.__version__, "line": line}


def _write(path: str, context: dict, rows: list[dict]) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump({**context, "load_now": _load(), "rows": rows}, f, indent=1)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())
