"""A tiny causal LM built entirely in code (no download), for exercising the transformers sampler.

The tokenizer is a byte-level BPE trained on the fly with the ``tokenizers`` library on a few lines of
kernel-like text; the model is a 2-layer GPT-2 with random weights. **Its output is noise**: it exists to
run the real generate → extract → evaluate → store path end to end, not to write kernels.
"""

from __future__ import annotations

CORPUS = [
    "import torch", "import torch.nn as nn", "class ModelNew(nn.Module):", "def forward(self, x):",
    "return torch.relu(x)", "```python", "```", "#include <torch/extension.h>", "#pragma omp parallel for",
    "load_inline(name='k', cpp_sources=src, functions=['f'])", "float acc = 0.f;", "for (int64_t i = 0; i < n; ++i)",
]


def build_tiny_model(seed: int = 0, vocab_size: int = 400):
    """(model, tokenizer): a random 2-layer GPT-2 and a locally trained byte-level BPE tokenizer."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                        pad_token="<|endoftext|>", bos_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=8192, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    model = GPT2LMHeadModel(config).eval()
    return model, tokenizer
