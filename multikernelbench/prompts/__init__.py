"""Prompts: platform contracts, worked exemplars and strategies (zero_shot, one_shot, category_shot)."""

from multikernelbench.prompts.contracts import Contract, contract_backends, get_contract, register_contract
from multikernelbench.prompts.strategies import build_prompt, register_strategy, strategy_names
from multikernelbench.prompts.templates import Prompt, task_view

__all__ = ["Contract", "Prompt", "build_prompt", "contract_backends", "get_contract", "register_contract",
           "register_strategy", "strategy_names", "task_view"]
