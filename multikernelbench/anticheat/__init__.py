"""Anti-cheat: static first filter, worker-side runtime evidence, parent-side judgement.

See README.md in this folder for every defence, what it catches, and its known limits.
"""

from multikernelbench.anticheat.config import AntiCheatConfig

__all__ = ["AntiCheatConfig"]
