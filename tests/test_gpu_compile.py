"""benchmarks/gpu_compile: its counts read XLA's and ptxas' own reports right.

The samples are captured from ``python -m benchmarks.gpu_compile --policy apt --arms 16
--keep DIR`` (jax 0.10.2, deviceless H100 compile, 6250 lanes): the thunk sequence of
the XLA program (kernel lines cut after the kernel's name), the metadata of its
``kWhile`` thunks and the optimised HLO's ``while`` lines (shapes shortened), and an
excerpt of ptxas' ``-v`` report on stderr. The compile itself runs in the slow set.
"""

# ruff: noqa: E501 (captured lines kept whole)

import json
import os
import subprocess
import sys

import pytest

from benchmarks import gpu_compile
from benchmarks import gpu_compile_parse as parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# module_0001.jit_jbandits_lanes.thunk_sequence_after_thunk_passes.txt (APT, K = 16)
THUNKS = """\
000: kCommandBuffer [source       | next=013 (1)]
    001: kCustomKernel [source       | next=002 (1)] loop_add_fusion_5
    002: kCustomKernel [prev=001 (1) | next=003 (1)] loop_slice_fusion
    003: kCustomKernel [prev=002 (1) | next=004 (1)] loop_slice_fusion_1
    004: kCustomKernel [prev=003 (1) | next=005 (1)] loop_xor_fusion
    005: kCustomKernel [prev=004 (1) | next=006 (1)] sort_14_1
    006: kCustomKernel [prev=005 (1) | next=008 (2)] input_broadcast_gather_reduce_fusion
    007: kCustomKernel [prev=002 (5) | next=008 (1)] loop_broadcast_fusion_1
    008: kCustomKernel [prev=007 (1) | next=009 (1)] input_reduce_fusion_6
    009: kCustomKernel [prev=008 (1) | next=010 (1)] loop_broadcast_convert_minimum_select_fusion
    010: kCustomKernel [prev=009 (1) | sink        ] loop_pad_fusion
    011: kCopy         [prev=006 (5) | sink        ] kCopy
    012: kCopy         [source       | sink        ] kCopy
013: kWhile         [prev=000 (1) | next=000 (1)]
condition:
    014: kCustomKernel [source       | next=015 (1)] loop_and_fusion
    015: kCustomKernel [prev=014 (1) | next=016 (1)] input_reduce_fusion_1
    016: kCustomKernel [prev=015 (1) | sink        ] loop_compare_fusion_2
  body:
    017: kCustomKernel [source       | next=018 (1)] loop_not_or_fusion
    018: kCustomKernel [prev=017 (1) | next=019 (1)] input_reduce_fusion_1
    019: kCustomKernel [prev=018 (1) | next=057 (1)] loop_compare_fusion_4
    057: kConditional  [prev=019 (1) | next=068 (1)]
      false_branch:
        000: kCommandBuffer [source       | next=026 (1)]
            020: kCopy [source | sink] kCopy
            021: kCopy [source | sink] kCopy
            022: kCopy [source | sink] kCopy
            023: kCopy [source | sink] kCopy
            024: kCopy [source | sink] kCopy
            025: kCopy [source | sink] kCopy
        026: kWhile         [prev=000 (1) | next=036 (1)]
condition:
            027: kCustomKernel [source | sink] loop_compare_fusion_1
          body:
            000: kCommandBuffer [source | sink]
                028: kCustomKernel [source       | next=029 (1)] loop_gather_fusion_1
                029: kCustomKernel [prev=028 (1) | next=031 (2)] input_scatter_fusion_3
                030: kCustomKernel [source       | next=031 (1)] input_reduce_fusion_2
                031: kCustomKernel [prev=030 (1) | next=034 (3)] loop_select_fusion_5
                032: kCustomKernel [source       | next=034 (2)] input_scatter_fusion_2
                033: kCustomKernel [source       | next=034 (1)] loop_add_fusion_1
                034: kCustomKernel [prev=033 (1) | sink        ] loop_convert_select_fusion
                035: kCustomKernel [source       | sink        ] loop_add_fusion_2
        036: kCopy          [prev=026 (1) | sink        ] kCopy
      true_branch:
        000: kCommandBuffer [source       | next=044 (1)]
            037: kCopy [source | sink] kCopy
            038: kCopy [source | sink] kCopy
            039: kCopy [source | sink] kCopy
            040: kCopy [source | sink] kCopy
            041: kCopy [source | sink] kCopy
            042: kCopy [source | sink] kCopy
            043: kCopy [source | sink] kCopy
        044: kWhile         [prev=000 (1) | sink        ]
condition:
            045: kCustomKernel [source | sink] loop_compare_fusion_1
          body:
            000: kCommandBuffer [source | sink]
                046: kCustomKernel [source       | next=048 (2)] loop_gather_fusion_1
                047: kCopy         [source       | next=048 (1)] kCopy
                048: kCustomKernel [prev=047 (1) | next=049 (1)] input_scatter_fusion_3
                049: kCustomKernel [prev=048 (1) | next=053 (4)] loop_select_fusion_4
                050: kCustomKernel [prev=048 (2) | next=051 (1)] input_reduce_fusion_2
                051: kCustomKernel [prev=050 (1) | next=053 (2)] loop_select_fusion_5
                052: kCustomKernel [source       | next=053 (1)] input_scatter_fusion
                053: kCustomKernel [prev=052 (1) | next=054 (1)] loop_add_select_fusion
                054: kCopy         [prev=053 (1) | sink        ] kCopy
                055: kCopy         [prev=053 (2) | sink        ] kCopy
                056: kCustomKernel [source       | sink        ] loop_add_fusion_2
    068: kConditional  [prev=057 (1) | next=069 (1)]
      false_branch:
        058: kCustomKernel [source | sink] loop_select_fusion_2
        059: kCustomKernel [source | sink] loop_select_fusion_1
        060: kCustomKernel [source | sink] loop_select_fusion
      true_branch:
        000: kCommandBuffer [source | sink]
            061: kCopy [source | sink] kCopy
            062: kCopy [source | sink] kCopy
            063: kCopy [source | sink] kCopy
            064: kCopy [source | sink] kCopy
            065: kCopy [source | sink] kCopy
            066: kCopy [source | sink] kCopy
            067: kCopy [source | sink] kCopy
    069: kCustomKernel [prev=068 (1) | next=070 (1)] input_reduce_fusion_4
    070: kCustomKernel [prev=069 (1) | next=092 (1)] loop_and_fusion_1
    092: kConditional  [prev=070 (1) | sink        ]
      false_branch:
        071: kCopy  [source       | next=072 (1)] kCopy
        072: kWhile [prev=071 (1) | sink        ]
condition:
            073: kCustomKernel [source | sink] loop_compare_fusion_1
          body:
            000: kCommandBuffer [source | sink]
                074: kCustomKernel [source       | next=076 (2)] loop_gather_fusion_1
                075: kCopy         [source       | next=076 (1)] kCopy
                076: kCustomKernel [prev=075 (1) | next=077 (1)] input_scatter_fusion_3
                077: kCustomKernel [prev=076 (1) | next=082 (5)] loop_select_fusion_4
                078: kCustomKernel [source       | next=079 (1)] input_reduce_fusion_2
                079: kCustomKernel [prev=078 (1) | next=081 (2)] loop_select_fusion_5
                080: kCustomKernel [source       | next=081 (1)] input_scatter_fusion
                081: kCustomKernel [prev=080 (1) | next=082 (1)] loop_add_select_fusion
                082: kCopy         [prev=081 (1) | sink        ] kCopy
                083: kCopy         [prev=081 (2) | sink        ] kCopy
                084: kCustomKernel [source       | sink        ] loop_add_fusion_2
      true_branch:
        000: kCommandBuffer [source | sink]
            085: kCopy [source | sink] kCopy
            086: kCopy [source | sink] kCopy
            087: kCopy [source | sink] kCopy
            088: kCopy [source | sink] kCopy
            089: kCopy [source | sink] kCopy
            090: kCopy [source | sink] kCopy
            091: kCopy [source | sink] kCopy
    093: kCustomKernel [source       | sink        ] loop_add_fusion_2
000: kCommandBuffer [prev=013 (1) | sink        ]
    094: kCustomKernel [source       | next=096 (2)] input_concatenate_fusion_1
    095: kCopy         [source       | next=096 (1)] kCopy
    096: kCustomKernel [prev=095 (1) | next=101 (5)] input_scatter_fusion_7
    097: kCustomKernel [source       | next=098 (1)] loop_broadcast_fusion
    098: kCustomKernel [prev=097 (1) | next=099 (1)] input_scatter_fusion_6
    099: kCustomKernel [prev=098 (1) | next=100 (1)] input_reduce_fusion_7
    100: kCustomKernel [prev=099 (1) | next=101 (1)] input_reduce_fusion_8
    101: kCustomKernel [prev=100 (1) | next=102 (1)] input_concatenate_fusion
    102: kCustomKernel [prev=101 (1) | sink        ] wrapped_compare
    103: kCustomKernel [prev=101 (2) | sink        ] wrapped_broadcast
"""

# module_0001.jit_jbandits_lanes.thunk_metadata.txt, the kWhile thunks
METADATA = "".join(
    f"""thunk_metadata {{
  thunk_info {{
    profile_annotation: "{name}"
    thunk_id: {number}
  }}
  thunk_kind: "kWhile"
}}
"""
    for number, name in (
        (13, "while.78"),
        (26, "while.27"),
        (44, "while.41"),
        (72, "while.59"),
    )
)

_TRIPS = """backend_config={"known_trip_count":{"n":"32"},"known_init_step":{"init":"0","step":"1"},"known_induction_variable":{"tuple_index":"0"}}"""
# module_0001.jit_jbandits_lanes.sm_9.0a_gpu_after_optimizations.txt, the while lines
HLO = f"""\
  %while.27 = (s32[], f32[6250,4,16]{{2,1,0}}) while(%tuple.89), condition=%region_19.56.clone, body=%region_15.55.clone, {_TRIPS}
  %while.41 = (s32[], f32[6250,4,16]{{2,1,0}}) while(%tuple.86), condition=%region_13.48.clone, body=%region_9.47.clone, {_TRIPS}
  %while.59 = (s32[], f32[6250,4,16]{{2,1,0}}) while(%tuple.92), condition=%region_13.48.clone.clone, body=%region_25.63.clone, {_TRIPS}
  %while.78 = (f32[6250,4,16]{{2,1,0}}) while(%tuple.101), condition=%region_27.68.clone, body=%region_6.66.clone
"""

# stderr of the fused APT row at K = 128 (16 lanes x 4 warps), two kernels' reports
PTXAS = """\
I1207 10:12:18.666769   25034 subprocess_compilation.cc:283] ptx written to: /tmp/tempfile-vm-e904970ee47a064-24826-6620875f750bd
I1207 10:12:18.666921   25034 subprocess_compilation.cc:313] .../nvidia/cuda_nvcc/bin/ptxas /tmp/tempfile-vm-e904970ee47a064-24826-6620875f750bd -o /tmp/tempfile-vm-e904970ee47a064-24826-6620875f750ff -arch=sm_90a --warn-on-spills -v
I1207 10:12:18.834667   25035 subprocess_compilation.cc:356] ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'loop_add_fusion' for 'sm_90a'
ptxas info    : Function properties for loop_add_fusion
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 26 registers, used 0 barriers
ptxas info    : Compile time = 347.844 ms
I1207 10:12:35.056709   25035 subprocess_compilation.cc:313] .../nvidia/cuda_nvcc/bin/ptxas /tmp/tempfile-vm-e199a44a3e75f49d-24826-6620876f12733 -o /tmp/tempfile-vm-e199a44a3e75f49d-24826-6620876f16810 -arch=sm_90a --warn-on-spills -v
I1207 10:12:41.762120   25035 subprocess_compilation.cc:349] ptxas warning : Registers are spilled to local memory in function 'jbandits_fused', 372 bytes spill stores, 396 bytes spill loads
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'jbandits_fused' for 'sm_90a'
ptxas info    : Function properties for jbandits_fused
    360 bytes stack frame, 372 bytes spill stores, 396 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 360 bytes cumulative stack size
ptxas info    : Compile time = 5937.836 ms
"""


def test_xla_counts_of_the_captured_apt_program():
    """APT, K = 16: 8 kernels per unguarded step, 8 + 3 copies guarded (the guarded
    step loop is the one that appears twice: in the segment and in its redo)."""
    got = parse.xla_counts(THUNKS, METADATA, HLO, 32)
    assert got["step_loops"] == 3
    assert got["step"] == {"kernel": 8, "copy": 0}
    assert got["guarded"] == {"kernel": 8, "copy": 3}
    assert got["step_condition"] == {"kernel": 1, "copy": 0}
    assert got["condition"] == {"kernel": 3, "copy": 0}
    # 3 + 2 + 1 kernels outside the conditionals; each conditional by its largest
    # branch: 7 copies (around the step loops), 7 copies (vs 3 selects), 7 copies
    assert got["segment"] == {"kernel": 6, "copy": 21}
    assert got["chunk"] == {"kernel": 19, "copy": 3}
    assert parse.fmt(got["guarded"]) == "8+3c" and parse.fmt(got["step"]) == "8"


def test_thunks_nest_by_indentation():
    top = parse.parse_thunks(THUNKS)
    assert [t.kind for t in top] == ["kCommandBuffer", "kWhile", "kCommandBuffer"]
    loop = top[1]
    assert set(loop.sections) == {"condition", "body"}
    assert [t.name for t in loop.sections["condition"]] == [
        "loop_and_fusion", "input_reduce_fusion_1", "loop_compare_fusion_2",
    ]  # fmt: skip
    cond = loop.sections["body"][3]
    assert cond.kind == "kConditional" and set(cond.sections) == {
        "false_branch", "true_branch",
    }  # fmt: skip
    # the copy after the nested loop (at the loop's indentation) is the branch's
    assert [t.kind for t in cond.sections["false_branch"]] == [
        "kCommandBuffer", "kWhile", "kCopy",
    ]  # fmt: skip


def test_launches_multiply_known_trip_counts():
    """A nested loop of known trip count counts its body (and condition) that many
    times; an unknown one once, or in a step (``apart``) its condition, and its body
    under "rare"; a conditional its largest branch, or in a step under "branch"."""
    text = """\
000: kWhile [source | sink]
condition:
    001: kCustomKernel [source | sink] cond_fusion
  body:
    002: kCustomKernel [source | sink] a_fusion
    003: kCopy [source | sink] kCopy
"""
    top = parse.parse_thunks(text)
    assert parse.launches(top, {0: 5}) == {"kernel": 10, "copy": 5}
    assert parse.launches(top, {}) == {"kernel": 2, "copy": 1}
    assert parse.launches(top, {}, apart=True) == {"kernel": 1, "rare": 2}
    cond = parse.parse_thunks(
        "000: kConditional [source | sink]\n"
        "  false_branch:\n"
        "    001: kCustomKernel [source | sink] a_fusion\n"
        "  true_branch:\n"
        "    002: kCustomKernel [source | sink] b_fusion\n"
        "    003: kCopy [source | sink] kCopy\n"
    )
    assert parse.launches(cond, {}) == {"kernel": 1, "copy": 1}
    assert parse.launches(cond, {}, apart=True) == {"branch": 2}
    assert parse.fmt({"kernel": 13, "copy": 3, "branch": 5}) == "13+3c (+5b)"


def test_trip_counts_and_names():
    assert parse.trip_counts(HLO) == {
        "while.27": 32, "while.41": 32, "while.59": 32, "while.78": None,
    }  # fmt: skip
    assert parse.thunk_names(METADATA)[26] == "while.27"
    with pytest.raises(ValueError, match="no 16-trip loop"):
        parse.xla_counts(THUNKS, METADATA, HLO, 16)


def test_ptxas_report():
    report = parse.ptxas_report(PTXAS)
    assert report == {
        "loop_add_fusion": {
            "registers": 26, "stack": 0, "spill_stores": 0, "spill_loads": 0,
        },
        "jbandits_fused": {
            "registers": 255, "stack": 360, "spill_stores": 372, "spill_loads": 396,
        },
    }  # fmt: skip
    # the --warn-on-spills line alone (a report cut short) still counts the spills
    warning = [line for line in PTXAS.splitlines() if "spilled" in line]
    assert parse.ptxas_report(warning[0])["jbandits_fused"]["spill_loads"] == 396


def test_pallas_kernel_names():
    line = (
        "  %custom-call.1 = (f32[6272]{0}) custom-call(f32[6272]{0} %p), "
        'custom_call_target="__gpu$xla.gpu.triton", backend_config={debug = false, '
        'grid_x = 98 : i32, name = "jbandits_fused", num_stages = 1 : i32}'
    )
    assert parse.pallas_kernels(f"%a = f32[] add(%b, %c)\n{line}\n{line}") == [
        "jbandits_fused"
    ]


def _row(**kw):
    row = dict(label="apt", backend="fused", arms=16, lanes=6250, status="compiled")
    return {**row, **kw}


def test_failures_are_errors_and_spills_not_refusals():
    ok = _row(kernel="jbandits_fused", spill_stores=0, spill_loads=0)
    spilled = _row(kernel="jbandits_fused", spill_stores=16, spill_loads=16)
    refused = _row(status="refused", reason="not kernel-safe: reshape")
    error = _row(status="error", error="JaxRuntimeError: INTERNAL: Failed")
    lab = _row(label="lab fused", kernel="kernel", spill_stores=8, spill_loads=8)
    assert gpu_compile.failures([ok, refused, lab]) == []
    assert gpu_compile.failures([spilled]) == [
        "apt fused K=16: jbandits_fused spills 32 bytes"
    ]
    assert "error" in gpu_compile.failures([error])[0]
    assert gpu_compile.failures([_row(status="timeout", error="over 1 s")])


def test_lanes_and_rows():
    assert gpu_compile.lanes_for(16, 1e5) == 6250
    assert gpu_compile.lanes_for(128, 1e5) == 782  # 781.25 rounded up to even
    assert gpu_compile.lanes_for(100, 1e5, 16) == 1008


@pytest.mark.slow
def test_harness_compiles_apt_for_an_h100(tmp_path):
    """The harness end to end: APT on XLA at K = 16 compiles for an H100 (needs the
    gpu-compile extra; about 20 s on 2 idle cores)."""
    pytest.importorskip("jax_plugins.xla_cuda12")
    out = tmp_path / "rows.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.gpu_compile", "--policy", "apt",
         "--backend", "xla", "--arms", "16", "--json", str(out), "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    (row,) = json.loads(out.read_text())["rows"]
    assert row["status"] == "compiled" and row["step"]["kernel"] >= 1
    assert row["guarded"]["kernel"] >= row["step"]["kernel"] - 2
