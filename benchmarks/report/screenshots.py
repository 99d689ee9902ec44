"""Screenshots of ``mkb report``'s HTML page in headless Chromium, for the README's and a reviewer's eyes.

Usage: python benchmarks/report/screenshots.py --db RESULTS.sqlite [--out benchmarks/report]
Writes ``report_top.png`` (header, tables, plots) and ``report_samples.png`` (the per-sample table with one
failure's full message opened), 1200 px wide, palette-quantised to stay small.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

OPEN_SAMPLES = """
<script>
(function () {  // at the end of the body: runs before the screenshot, no event needed
  var heads = document.getElementsByTagName("h3"), start = null;
  for (var i = 0; i < heads.length; i++) if (heads[i].textContent === "Samples") start = heads[i];
  while (start && start.previousElementSibling) start.previousElementSibling.remove();
  var ds = document.querySelectorAll("table.samples details");
  for (var j = 0; j < ds.length; j++) {
    if (ds[j].textContent.indexOf("SyntaxError") >= 0) { ds[j].open = true; break; }
  }
})();
</script>
"""


def shoot(browser: str, page: Path, png: Path, tmp: Path, height: int) -> None:
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                    f"--user-data-dir={tmp / 'profile'}", f"--window-size=1200,{height}", f"--screenshot={png}",
                    page.as_uri()], check=True, capture_output=True, timeout=120)
    Image.open(png).convert("RGB").quantize(colors=64).save(png, optimize=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = ap.parse_args()
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
                   None)
    if browser is None:
        print("no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        subprocess.run([sys.executable, "-m", "multikernelbench.cli.main", "report", "--db", str(args.db), "--out",
                        str(tmp / "rep"), "--quiet"], check=True)
        page = tmp / "rep" / "report.html"
        shoot(browser, page, args.out / "report_top.png", tmp, 2600)
        opened = tmp / "rep" / "samples.html"
        opened.write_text(page.read_text().replace("</body>", OPEN_SAMPLES + "</body>"))
        shoot(browser, opened, args.out / "report_samples.png", tmp, 1100)
    for name in ("report_top.png", "report_samples.png"):
        print(f"{args.out / name}: {(args.out / name).stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
