"""``mkb generate``'s vLLM flags -> VLLMConfig -> the keyword arguments ``vllm.LLM`` gets, without vLLM.

The real engine runs these options in ``tests/real_vllm/`` (its own venv); this checks, in the main suite,
that every flag reaches the config under vLLM's own name, that unset flags stay out (vLLM's defaults apply),
and that ``mkb generate --vllm`` where vLLM is missing ends with a usage message instead of a traceback.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from multikernelbench.cli._vllm_options import vllm_config_from_args
from multikernelbench.cli.main import build_parser
from multikernelbench.sampling.vllm_sampler import VLLMConfig


def _config(*flags: str) -> VLLMConfig:
    args = build_parser().parse_args(["generate", "--vllm", "--model", "/weights/m", *flags])
    return vllm_config_from_args(args)


def test_unset_flags_leave_vllm_defaults():
    assert _config().llm_kwargs() == {"model": "/weights/m"}


def test_every_flag_reaches_llm_under_vllms_name():
    cfg = _config("--tensor-parallel-size", "2", "--max-model-len", "4096", "--gpu-memory-utilization", "0.5",
                  "--kv-cache-memory-bytes", "268435456", "--dtype", "bfloat16", "--trust-remote-code",
                  "--seed", "3", "--enforce-eager", "--no-enable-chunked-prefill", "--vllm-batch-size", "16",
                  "--engine-args", '{"max_num_seqs": 8, "max_model_len": 2048}')
    assert cfg.batch_size == 16
    assert cfg.llm_kwargs() == {"model": "/weights/m", "tensor_parallel_size": 2, "max_model_len": 2048,
                                "gpu_memory_utilization": 0.5, "kv_cache_memory_bytes": 268435456,
                                "dtype": "bfloat16", "trust_remote_code": True, "seed": 3, "enforce_eager": True,
                                "enable_chunked_prefill": False, "max_num_seqs": 8}  # --engine-args wins


def test_engine_args_must_be_a_json_object(capsys):
    with pytest.raises(SystemExit) as exc:
        _config("--engine-args", "[1, 2]")
    assert exc.value.code == 2 and "want a JSON object" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_mkb_generate_vllm_without_vllm_says_what_to_do(tmp_path):
    out = tmp_path / "gen.jsonl"
    proc = subprocess.run([sys.executable, "-m", "multikernelbench.cli.main", "generate", "--vllm", "--model",
                           "/weights/m", "--task", "activation.relu", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "needs the `vllm` package" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()
