"""The static rules' registry and the parsed candidate they read (its own module, so rule modules for one
family of backends, e.g. anticheat/static_python_dsl.py, register without importing anticheat/static.py, which
imports them)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from multikernelbench.anticheat import static_rules as R
from multikernelbench.anticheat.static_rules import Finding
from multikernelbench.registry import Registry


@dataclass(frozen=True)
class Rule:
    name: str
    fn: Callable[[Context], Iterable[Finding]]
    #: Backends it applies to; ``"*"`` = every backend.
    backends: tuple[str, ...] = ("*",)
    #: Belongs to the "compute must be the candidate's own kernel" family (AntiCheatConfig.require_custom_kernel).
    custom_kernel: bool = False

    def applies_to(self, backend: str) -> bool:
        return "*" in self.backends or backend in self.backends

    def __call__(self, ctx: Context) -> Iterable[Finding]:
        return self.fn(ctx)


#: rule name -> Rule. A backend outside the package adds rules with ``@register("mychip")`` in a module it
#: imports, or with entry points in the ``multikernelbench.static_rules`` group naming such rules.
RULES: Registry[Rule] = Registry("static rule", entry_point_group="multikernelbench.static_rules")


def register(*backends: str, custom_kernel: bool = False, name: str | None = None):
    """Decorator: ``@register("*")`` for every backend, ``@register("cpu", "cuda")`` for some. Registers the
    function under its name (or ``name``) and returns the :class:`Rule`, which calls like the function."""

    def deco(fn) -> Rule:
        rule_name = name or fn.__name__
        return RULES.register(rule_name, Rule(rule_name, fn, tuple(backends), custom_kernel))

    return deco


class Context:
    """Parsed candidate plus what the rules need to know about the task."""

    def __init__(self, source: str, reference_source: str = "", task_dtype: str = "float32",
                 backend: str = "cpu") -> None:
        self.source, self.task_dtype, self.backend = source, task_dtype, backend
        self.tree = R.parse(source)
        self.aliases = R.import_aliases(self.tree)
        self.reference_ops = R.reference_ops(reference_source) if reference_source else set()
        self.reachable = R.reachable_from_forward(self.tree, self.aliases)
        self.code_strings = list(R.code_strings(self.tree))
        self.globals = R.module_globals(self.tree) | set(self.aliases)

    def torch_or_tensor_call(self, node: ast.Call) -> bool:
        """A torch function, or a method on a local value (a tensor) -- not a call into the candidate's own
        extension module or another library bound at module level (``_ext.relu(x)``, ``jnp.dot``)."""
        if self.call_name(node).startswith("torch."):
            return True
        root = R.dotted(node.func).split(".")[0]
        return isinstance(node.func, ast.Attribute) and root not in self.globals and root != "self"

    def call_name(self, node: ast.Call) -> str:
        """Dotted name of a call with import aliases resolved: ``F.relu`` -> ``torch.nn.functional.relu``."""
        return R.resolve(R.dotted(node.func), self.aliases)
