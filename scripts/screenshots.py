"""Screenshots of a run's HTML report for the docs, taken in headless Chromium (Debian's
chromium and chromedriver, as the report's tests use): the verdict, a step's latency
panels (every method of the run, small multiples per target and path) and a filtered view.

    .venv/bin/python scripts/screenshots.py [--store accessbench.db] [--run last] [--out docs/captures]

Take them after a full `accessbench run --quick`, so the panels hold all 30 methods."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from accessbench.report.html import render_html
from accessbench.store import Store

WIDTH = 1280
# The filtered view: PostgreSQL over its unix socket only, as a reader would tick it.
FILTER = "#filter=target:sqlite,target:mariadb,path:tcp"


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--hide-scrollbars", f"--window-size={WIDTH},1000", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def shoot(driver: webdriver.Chrome, url: str, selector: str, target: Path) -> None:
    driver.get("about:blank")
    driver.get(url)
    driver.set_window_size(WIDTH, driver.execute_script("return document.body.scrollHeight") + 200)
    element = driver.find_element(By.CSS_SELECTOR, selector)
    element.screenshot(str(target))
    print(f"wrote {target}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", default="accessbench.db")
    parser.add_argument("--run", default="last")
    parser.add_argument("--out", default="docs/captures", type=Path)
    args = parser.parse_args(argv)
    with Store(args.store) as store:
        stored = store.load(store.resolve(args.run))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        page = Path(work) / "report.html"
        page.write_text(render_html(stored), encoding="utf-8")
        url = page.as_uri()
        driver = browser()
        try:
            shoot(driver, url, "#verdict", args.out / "report-verdict.png")
            # The first step's latency panels: every method of the run, a panel per target and path.
            shoot(driver, url, "section.step .panels", args.out / "report-latency-panels.png")
            shoot(driver, url + FILTER, "section.step", args.out / "report-filtered.png")
        finally:
            driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
