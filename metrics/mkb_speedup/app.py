"""The Space's entry point: evaluate's standard Gradio widget for this metric (the app that `evaluate-cli
create` generates for every metric Space). It loads the script beside it, so it runs the same in the Space and
in a checkout (`python metrics/mkb_speedup/app.py`, needs gradio). The package never imports it."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).resolve().with_name("mkb_speedup.py")))
launch_gradio_widget(module)
