"""The console's live charts and the emulator's health banner, against a real regcoded in headless Chromium."""

import time

import pytest
from selenium.webdriver.common.by import By

from conftest import start_daemon, stop_daemon
from test_console import open_console, wait


def chart_state(driver, chart):
    """The polyline points and the series end of the first fleet card's chart."""
    return driver.execute_script(
        """
        const chart = document.querySelector('.fleet [data-chart="' + arguments[0] + '"]');
        if (!chart) return null;
        return { end: chart.dataset.end || null,
                 points: Array.from(chart.querySelectorAll('polyline')).map((p) => p.getAttribute('points') || '') };
        """,
        chart,
    )


def main_thread_gaps(driver, seconds):
    """The longest wait, in ms, of timers asked for every 50 ms over `seconds`: how long the page stops responding."""
    return driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const until = performance.now() + arguments[0] * 1000;
        let last = performance.now(), worst = 0;
        (function tick() {
          const now = performance.now();
          worst = Math.max(worst, now - last - 50);
          last = now;
          if (now < until) setTimeout(tick, 50); else done(worst);
        })();
        """,
        seconds,
    )


def test_the_charts_move_while_a_fleet_polls(regcoded, driver, screenshots):
    open_console(driver, regcoded.url)
    for index in range(4):
        regcoded.rpc("devices.add", {"device": f"chart-{index}", "scenario": "login"})
    # Polls every 3 s: the polls chart draws a line off its floor, and its series moves on second by second.
    wait(driver, lambda d: "," in ((chart_state(d, "polls") or {}).get("points") or [""])[0], message="the polls chart never drew a line")
    wait(driver, lambda d: any(float(point.split(",")[1]) < 100 for point in
                               ((chart_state(d, "polls") or {}).get("points") or [""])[0].split(" ") if "," in point),
         message="the polls chart never rose above zero")
    first = chart_state(driver, "polls")
    wait(driver, lambda d: chart_state(d, "polls")["end"] != first["end"], 10, "the chart's series did not move on")
    wait(driver, lambda d: chart_state(d, "polls")["points"] != first["points"], 10, "the chart's line did not move")
    lateness = chart_state(driver, "lateness")
    assert lateness and lateness["points"][0], "no lateness line"
    assert driver.find_element(By.ID, "generator-banner").get_attribute("hidden") is not None
    screenshots(driver, "charts")


@pytest.fixture(scope="module")
def large_fleet():
    daemon = start_daemon(["--devices", "2000", "--poll-interval", "10s"])
    yield daemon
    stop_daemon(daemon)


def test_the_page_stays_responsive_at_two_thousand_devices(large_fleet, driver, screenshots):
    try:
        check_responsive(large_fleet, driver, screenshots)
    finally:
        # This daemon stops when the module ends: a page still calling it would log refused connections.
        driver.get("about:blank")


def check_responsive(large_fleet, driver, screenshots):
    open_console(driver, large_fleet.url)
    wait(driver, lambda d: d.find_element(By.ID, "daemon-devices").text.startswith("2000 devices"), 120, "the 2,000 devices never showed")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "tr[data-device]")) == 2000, 120, "the table never held 2,000 rows")
    # Once every device has its code (the start-up burst of a debug daemon takes both cores), the fleet polls on.
    settled = lambda: set(large_fleet.rpc("daemon.status")["states"]) <= {"polling", "authenticated"}
    deadline = time.time() + 240
    while not settled() and time.time() < deadline:
        time.sleep(1)
    assert settled(), "the 2,000 devices never all got their codes"
    start = chart_state(driver, "polls")
    # Over ten seconds of charts redrawn every second and rows ticking, the page never stops answering for long.
    worst = main_thread_gaps(driver, 10)
    assert worst < 1000, f"the page stopped responding for {worst:.0f} ms"
    assert chart_state(driver, "polls")["end"] != start["end"], "the charts stopped moving at 2,000 devices"
    screenshots(driver, "charts-2000")


def test_a_rows_poll_figures_follow_its_polls(regcoded, driver):
    open_console(driver, regcoded.url)
    regcoded.rpc("devices.add", {"device": "rows-poll", "scenario": "login"})
    status = lambda d: d.find_element(By.CSS_SELECTOR, 'tr[data-device="rows-poll"] [data-field="http-status"]').text
    wait(driver, lambda d: "poll" in status(d), message="the row never showed a poll")
    # Polls every 3 s send no event and a full list comes every 15 s: two changes within 12 s come from
    # devices.polled, second by second.
    changes, seen, deadline = 0, status(driver), time.time() + 12
    while time.time() < deadline and changes < 2:
        now = status(driver)
        if now != seen:
            changes, seen = changes + 1, now
        time.sleep(0.1)
    assert changes >= 2, f"the row's poll figures changed {changes} times in 12 s: {seen}"
