"""scripts/device-prepare.sh and scripts/device-check.sh (the lent GPU machine with no network): both parse; the
pruned engine source keeps what a CUDA or CPU llama-server build and the synthetic writer read and drops the rest
(a small tree of llama.cpp's layout); scripts/device_report.py reads the engine's timing lines, the bandwidth of
a GPU and the carry folder's manifest. No model, no network, no build."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parents[2] / "scripts"
spec = importlib.util.spec_from_file_location("device_report", SCRIPTS / "device_report.py")
assert spec and spec.loader
device_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(device_report)

KEPT = [
    "CMakeLists.txt",
    "common/arg.cpp",
    "ggml/src/ggml-cpu/ggml-cpu.c",
    "ggml/src/ggml-cuda/fattn.cu",
    "ggml/src/ggml-cuda/template-instances/fattn-vec-instance-q5_0-q4_1.cu",
    "ggml/src/ggml-rpc/ggml-rpc.cpp",
    "licenses/LICENSE-curl",
    "models/ggml-vocab-gemma-4.gguf",
    "scripts/ui-assets.cmake",
    "src/models/dflash.cpp",
    "tools/mtmd/clip.cpp",
    "tools/server/server.cpp",
    "tools/ui/CMakeLists.txt",
    "tools/ui/ui.cpp.in",
    "vendor/cpp-httplib/httplib.h",
]
DROPPED = [
    ".git",
    ".github/workflows/build.yml",
    "convert_hf_to_gguf.py",
    "docs/ops/CUDA.csv",
    "examples/simple/simple.cpp",
    "ggml/src/ggml-cuda/template-instances/generate_cu_files.py",
    "ggml/src/ggml-metal/ggml-metal.m",
    "ggml/src/ggml-sycl/ggml-sycl.cpp",
    "ggml/src/ggml-vulkan/ggml-vulkan.cpp",
    "ggml/src/ggml-webgpu/ggml-webgpu.cpp",
    "gguf-py/gguf/__init__.py",
    "media/llama0-logo.png",
    "models/ggml-vocab-qwen2.gguf",
    "models/templates/google-gemma-4.jinja",
    "tests/test-backend-ops.cpp",
    "tools/mtmd/test-3.mp4",
    "tools/server/tests/unit/test_basic.py",
    "tools/ui/package-lock.json",
    "tools/ui/src/app.html",
]


@pytest.mark.parametrize("script", ["device-prepare.sh", "device-check.sh"])
def test_scripts_parse_and_refuse_unknown_arguments(script):
    assert subprocess.run(["bash", "-n", str(SCRIPTS / script)], capture_output=True).returncode == 0
    run = subprocess.run(["bash", str(SCRIPTS / script), "--no-such-option"], capture_output=True, text=True)
    assert run.returncode == 2 and "unknown argument --no-such-option" in run.stderr


def test_the_pruned_source_keeps_the_build_and_the_gemma_vocabulary(tmp_path):
    for name in KEPT + DROPPED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    run = subprocess.run(
        ["bash", str(SCRIPTS / "device-prepare.sh"), "--list-kept", str(tmp_path)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == sorted(KEPT)


def test_the_engines_timing_lines_give_prefill_decode_and_acceptance():
    log = "\n".join(
        [
            "0.18.1 I slot print_timing: id  0 | task 0 | prompt eval time =    1225.08 ms /    32 tokens "
            "(   38.28 ms per token,    26.12 tokens per second)",
            "0.18.2 I slot print_timing: id  0 | task 0 |        eval time =    6079.10 ms /     8 tokens "
            "(  868.44 ms per token,     1.15 tokens per second)",
            "0.18.3 I slot print_timing: id  0 | task 0 | draft acceptance = 0.25000 (    3 accepted /    12 "
            "generated), mean len =  1.00",
        ]
    )
    found = device_report.timings(log)
    assert found["prompt_tokens"] == 32 and found["prefill_tok_s"] == 26.12
    assert found["gen_tokens"] == 8 and found["decode_tok_s"] == 1.15
    assert (found["draft_accepted"], found["draft_generated"]) == (3, 12)
    assert device_report.timings("no request yet") == {}


def test_bandwidth_by_name_then_by_clock_and_bus_and_the_decode_limit():
    assert device_report.bandwidth("NVIDIA H100 80GB HBM3", None, None)[0] == 3350e9
    assert device_report.bandwidth("NVIDIA H100 PCIe", None, None)[0] == 2000e9
    assert device_report.bandwidth("NVIDIA H200", None, None)[0] == 4800e9
    assert device_report.bandwidth("NVIDIA GeForce RTX 4090", None, None)[0] == 1008e9
    bw, source = device_report.bandwidth("Some Future GPU", 1000.0, 512)  # 2 x 1 GHz x 64 bytes
    assert bw == 128e9 and "bus width" in source
    assert device_report.bandwidth("Some Future GPU", None, None)[0] is None
    terms = [
        {"label": "target weights", "planned": 18e9, "measured": 17.5e9},
        {"label": "target KV cache", "planned": 1e9, "measured": 1e9},
    ]
    assert device_report.decode_limit(terms, 3500e9)["decode_limit_tok_s"] == 200.0
    assert device_report.decode_limit(terms, None)["decode_limit_tok_s"] is None


def test_the_manifest_check_names_a_changed_file(tmp_path, capsys):
    (tmp_path / "wheels").mkdir()
    wheel = tmp_path / "wheels" / "x-1-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    entry = {"path": "wheels/x-1-py3-none-any.whl", "bytes": 5, "sha256": hashlib.sha256(b"wheel").hexdigest()}
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"files": [entry]}))
    assert device_report.verify(tmp_path) == 0
    wheel.write_bytes(b"whee!")
    assert device_report.verify(tmp_path) == 1
    assert "x-1-py3-none-any.whl: size or sha256 differs" in capsys.readouterr().out
