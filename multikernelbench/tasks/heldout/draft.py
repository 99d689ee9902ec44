"""The growing description of one generated task: its tensors (with symbolic sizes), modules and cost terms.

Sizes are Python expressions over the task's shape keys (``batch``, ``c0``, ``height`` ...) and size
variables of earlier steps, so the same text serves the generated ``sizes(shape)`` function, the costs and
the dims bookkeeping here. Flop and byte terms reference tensors by name (``s["t2"][1]``), which keeps the
generated cost functions readable and checkable against the real tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

SPATIAL_NAMES = {"1d": ("length",), "2d": ("height", "width"), "3d": ("depth", "height", "width")}


@dataclass(frozen=True)
class Role:
    """What a shape key measures (how sizing draws it) and the multiple its values must be."""

    kind: str  # "batch" | "channels" | "features" | "seq" | "spatial"
    multiple: int = 1


@dataclass(frozen=True)
class Value:
    """One tensor of the forward: its name, symbolic dims and what of it is already reduced away."""

    name: str
    dims: tuple[str, ...]
    layout: str  # "rows" (features last) or "1d" / "2d" / "3d" (N, C, spatial...)
    channel_reduced: bool = False  # the channel / feature axis has size 1
    spatial_reduced: bool = False  # every spatial axis has size 1

    @property
    def channel_axis(self) -> int:
        return len(self.dims) - 1 if self.layout == "rows" else 1

    @property
    def spatial_axes(self) -> tuple[int, ...]:
        return () if self.layout == "rows" else tuple(range(2, len(self.dims)))

    @property
    def is_conv(self) -> bool:
        return self.layout != "rows"

    def ref(self, axis: int) -> str:
        """This tensor's size along ``axis`` inside the generated cost functions."""
        return f's["{self.name}"][{axis}]'

    @property
    def numel(self) -> str:
        return f'_numel(s["{self.name}"])'


@dataclass(frozen=True)
class Step:
    """One op of the forward, as it is written out."""

    kind: str  # registry name of the op
    label: str  # human readable, for the description and comments
    slug: str  # short name for the task name
    line: str  # forward line, e.g. "t2 = F.gelu(t1)"
    out: str  # output tensor name
    flops: tuple[tuple[str, str, bool], ...]  # (what, expression, counted by torch's FlopCounterMode)
    signature: tuple  # structural identity (op kind and its constant parameters), for dedup


@dataclass(frozen=True)
class ExtraInput:
    name: str
    dims: tuple[str, ...]
    maker: str  # gen helper call; "{s}" stands for the input's sizes, e.g. "randn(gen, *{s})"


@dataclass
class Draft:
    """Everything drawn so far; ops append to it through the methods below."""

    family: str
    keys: dict[str, Role] = field(default_factory=dict)  # shape key -> role, in first-use order
    init_keys: list[str] = field(default_factory=list)  # Model constructor arguments
    members: list[str] = field(default_factory=list)  # __init__ lines (after super().__init__())
    size_lines: list[str] = field(default_factory=list)  # sizes() lines for derived size variables
    inputs: list[ExtraInput] = field(default_factory=list)
    params: list[tuple[str, str]] = field(default_factory=list)  # (what, numel expression)
    steps: list[Step] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)  # every tensor produced, in order
    counters: dict[str, int] = field(default_factory=dict)

    @property
    def current(self) -> Value:
        return self.values[-1]

    def fresh(self, prefix: str) -> str:
        self.counters[prefix] = self.counters.get(prefix, 0) + 1
        return f"{prefix}{self.counters[prefix]}"

    def key(self, prefix: str, role: Role) -> str:
        """A new shape key (``c1``, ``f2`` ...) or, for unnumbered names (``batch``), the existing one."""
        numbered = len([k for k in self.keys if k.startswith(prefix)])
        name = prefix if role.kind in ("batch", "spatial") else f"{prefix}{numbered}"
        if name not in self.keys:
            self.keys[name] = role
        return name

    def require_multiple(self, key: str, multiple: int) -> None:
        """Values of ``key`` must be a multiple of ``multiple`` (groups of a conv or a group norm)."""
        from math import lcm

        if key in self.keys:
            role = self.keys[key]
            self.keys[key] = replace(role, multiple=lcm(role.multiple, multiple))

    def size_var(self, prefix: str, expr: str) -> str:
        var = self.fresh(prefix)
        self.size_lines.append(f"{var} = {expr}")
        return var

    def member(self, prefix: str, ctor: str, after: tuple[str, ...] = ()) -> str:
        """``self.<prefix><n> = <ctor>`` (``{m}`` in ``after`` lines stands for the attribute)."""
        name = f"{prefix}{len(self.steps) + 1}"
        self.members.append(f"self.{name} = {ctor}")
        self.members.extend(line.format(m=f"self.{name}") for line in after)
        return f"self.{name}"

    def add_input(self, dims: tuple[str, ...], maker: str = "randn(gen, *{s})", name: str | None = None) -> str:
        """A forward argument; ``{s}`` in ``maker`` stands for its sizes (``s["r1"]``) in get_inputs."""
        name = name or ("x" if not self.inputs else self.fresh("r"))
        self.inputs.append(ExtraInput(name, dims, maker))
        return name

    def start(self, value: Value) -> Value:
        """The first tensor of the chain (an input)."""
        self.values.append(value)
        return value

    def init_arg(self, key: str) -> str:
        """``key`` as a Model constructor argument (module constructors name their sizes by it)."""
        if key not in self.init_keys:
            self.init_keys.append(key)
        return key

    def emit(self, kind: str, label: str, slug: str, expr: str, value: Value, flops, signature: tuple,
             params: tuple[tuple[str, str], ...] = ()) -> Value:
        """Append one step whose output is ``expr`` with ``value``'s dims and flags (its name is assigned)."""
        name = f"t{len(self.steps) + 1}"
        out = replace(value, name=name)
        self.steps.append(Step(kind, label, slug, f"{name} = {expr}", name, tuple(flops), signature))
        self.params.extend(params)
        self.values.append(out)
        return out

    def channel_key(self, v: Value) -> str | None:
        """The shape key that is ``v``'s channel/feature size, when it is a plain key."""
        d = v.dims[v.channel_axis]
        return d if d in self.keys else None

    def channel_key_of(self, v: Value) -> str:
        """:meth:`channel_key` for an op whose ``applies`` required one: a missing key is that op's bug, raised
        here rather than written into the task's source as ``None``."""
        key = self.channel_key(v)
        if key is None:
            raise RuntimeError(f"{v.name or 'the value'} has no plain channel key (dims {v.dims})")
        return key
