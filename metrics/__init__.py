"""``evaluate`` metric modules, installed as ``multikernelbench.metrics`` (setup.py maps this folder).

Each subfolder is a self-contained ``evaluate`` module (script, card, Space ``app.py`` and
``requirements.txt``); the installed package copies ``mkb_speedup`` into ``evaluate``'s cache so that
``evaluate.load("mkb_speedup")`` finds it by name (multikernelbench/hfcache).
"""
