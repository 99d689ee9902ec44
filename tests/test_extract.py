"""Code extraction from raw model responses: the shapes real responses take."""

from multikernelbench.extract import extract_code, split_reasoning

MODEL = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_tagged_block_with_prose():
    text = f"Here is my kernel:\n```python\n{MODEL}```\nIt is fast because..."
    assert extract_code(text) == MODEL


def test_untagged_block():
    assert extract_code(f"```\n{MODEL}```") == MODEL


def test_several_blocks_prefers_the_one_defining_modelnew():
    cpp = "```cpp\n__global__ void k() {}\n```"
    helper = "```python\nimport torch\ndef helper():\n    return 1\n```"
    text = f"First the kernel:\n{cpp}\nA helper:\n{helper}\nAnd the model:\n```python\n{MODEL}```"
    assert extract_code(text) == MODEL


def test_last_modelnew_block_wins_when_restated():
    fixed = MODEL.replace("pass", "x = 1")
    text = f"```python\n{MODEL}```\nOops, corrected:\n```python\n{fixed}```"
    assert extract_code(text) == fixed


def test_unclosed_fence_runs_to_end():
    assert extract_code(f"```python\n{MODEL}") == MODEL


def test_no_fence_bare_code():
    assert extract_code(MODEL) == MODEL


def test_no_code_at_all():
    assert extract_code("I cannot help with that.") == ""
    assert extract_code("") == ""
    assert extract_code(None) == ""


def test_tilde_fences_and_py_tag():
    assert extract_code(f"~~~py\n{MODEL}~~~") == MODEL


def test_reasoning_is_separated():
    text = f"<think>maybe use shared memory\n```python\nclass ModelNew: wrong\n```</think>\n```python\n{MODEL}```"
    reasoning, answer = split_reasoning(text)
    assert "shared memory" in reasoning and "<think>" not in answer
    assert extract_code(text) == MODEL


def test_unterminated_reasoning_yields_no_code():
    assert extract_code("<think>I will write\n```python\nclass ModelNew: pass\n```") == ""
