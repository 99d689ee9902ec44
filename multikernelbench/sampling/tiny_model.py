"""A tiny causal LM built entirely in code (no download), for exercising the samplers for real.

The tokenizer is a byte-level BPE trained on the fly with the ``tokenizers`` library; the model is a 2-layer
GPT-2 with random weights. **Its output is noise**: it exists to run the real generate → extract → evaluate
→ store path end to end (transformers in-process, vLLM offline and ``vllm serve``), not to write kernels.

``build_tiny_model()`` is the smallest one, for in-process transformers tests. ``save_tiny_model(dir)`` writes a
model folder that vLLM can load: head_dim 64 (vLLM's CPU attention rejects 16), a tokenizer trained on the
suite's own prompt text (so a prompt is ~1k tokens and fits a small ``max_model_len``) and a plain chat template
(``role: content`` lines, the same text ``hf_sampler.render_chat`` makes without a template).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

CORPUS = [
    "import torch", "import torch.nn as nn", "class ModelNew(nn.Module):", "def forward(self, x):",
    "return torch.relu(x)", "```python", "```", "#include <torch/extension.h>", "#pragma omp parallel for",
    "load_inline(name='k', cpp_sources=src, functions=['f'])", "float acc = 0.f;", "for (int64_t i = 0; i < n; ++i)",
]

#: The same transcript ``hf_sampler.render_chat`` writes for a tokenizer without a template, as Jinja.
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant: {% endif %}")


def prompt_corpus(backends: Iterable[str] = ("cpu", "cuda", "triton", "pallas")) -> list[str]:
    """Lines of the category-shot prompt of one task per category and backend: text like what the model is fed."""
    from multikernelbench.prompts import build_prompt
    from multikernelbench.tasks import Task, load_suite

    first: dict[str, Task] = {}
    for task in load_suite():
        first.setdefault(task.category, task)
    lines: list[str] = []
    for task in first.values():
        for backend in backends:
            for message in build_prompt(task, backend, "category_shot").messages:
                lines += [ln for ln in message["content"].splitlines() if ln.strip()]
    return lines


def train_tokenizer(corpus: Iterable[str], vocab_size: int):
    """A byte-level BPE ``PreTrainedTokenizerFast`` trained on ``corpus``, with ``<|endoftext|>`` as eos/pad/bos."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(corpus), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                   bos_token="<|endoftext|>")


def random_gpt2(tokenizer, seed: int = 0, n_embd: int = 32, n_head: int = 2, n_layer: int = 2,
                n_positions: int = 8192):
    """A GPT-2 with random (seeded) weights sized to ``tokenizer``'s vocabulary, in eval mode."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=n_embd, n_layer=n_layer,
                        n_head=n_head, bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    return GPT2LMHeadModel(config).eval()


def build_tiny_model(seed: int = 0, vocab_size: int = 400):
    """(model, tokenizer): a random 2-layer GPT-2 (n_embd 32) and a BPE tokenizer trained on a few code lines."""
    tokenizer = train_tokenizer(CORPUS * 4, vocab_size)
    return random_gpt2(tokenizer, seed=seed), tokenizer


def save_tiny_model(path: str | Path, seed: int = 0, vocab_size: int = 2000, n_embd: int = 128, n_head: int = 2,
                    n_layer: int = 2, n_positions: int = 4096) -> Path:
    """Write a random GPT-2 and its tokenizer (with :data:`CHAT_TEMPLATE`) to ``path``, loadable by
    ``transformers.AutoModelForCausalLM`` and by vLLM (offline ``LLM(model=path)`` or ``vllm serve path``).
    ``n_positions`` caps the ``max_model_len`` vLLM accepts. Returns ``path``."""
    path = Path(path)
    tokenizer = train_tokenizer(CORPUS * 4 + prompt_corpus(), vocab_size)
    tokenizer.chat_template = CHAT_TEMPLATE
    model = random_gpt2(tokenizer, seed=seed, n_embd=n_embd, n_head=n_head, n_layer=n_layer,
                        n_positions=n_positions)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m multikernelbench.sampling.tiny_model DIR``: write the vLLM-loadable tiny model to DIR."""
    import argparse

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("dir", type=Path)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(save_tiny_model(args.dir, seed=args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
