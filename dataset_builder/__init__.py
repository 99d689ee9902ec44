"""Builds the task suite into a Hugging Face dataset folder and pushes it to the Hub.

``build``: parquet rows + card, deterministic and versioned by content; ``card``: the README rendered from
the top-level CARD.md; ``push``: the huggingface_hub upload. The CLI is ``mkb dataset build|push``.
"""
