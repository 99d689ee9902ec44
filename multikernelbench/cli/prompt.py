"""``mkb prompt TASK --backend B --strategy S``: print the prompt a model would get (or its JSON messages)."""

from __future__ import annotations

import json

from multikernelbench.cli._heldout import add_task_set_option, tasks_for
from multikernelbench.cli._usage import select_tasks
from multikernelbench.prompts import build_prompt, contract_backends, strategy_names


def add_parser(sub) -> None:
    p = sub.add_parser("prompt", help="print one prompt (task x backend x strategy)")
    p.add_argument("task", help="task id, e.g. activation.relu")
    p.add_argument("--backend", default="cpu", choices=contract_backends())
    p.add_argument("--strategy", default="category_shot", choices=strategy_names())
    p.add_argument("--json", action="store_true", help="print the chat messages as JSON")
    add_task_set_option(p)
    p.set_defaults(func=run)


def run(args) -> int:
    (task,) = tasks_for(args, ids=[args.task]) if args.task_set != "suite" else select_tasks(ids=[args.task])
    prompt = build_prompt(task, args.backend, args.strategy)
    if args.json:
        print(json.dumps({"task_id": prompt.task_id, "backend": prompt.backend, "strategy": prompt.strategy,
                          "exemplar": prompt.exemplar, "messages": prompt.messages}, indent=2))
    else:
        print(prompt.text())
    return 0
