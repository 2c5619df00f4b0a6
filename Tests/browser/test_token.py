"""The console against a daemon that requires a bearer token."""

import os
import urllib.error

import pytest
from selenium.webdriver.common.by import By

from conftest import start_daemon, stop_daemon
from test_console import CODE, field, open_console, row, wait

TOKEN = "lab-token-5b2f0c"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory, driver):
    token_file = tmp_path_factory.mktemp("token") / "http-token"
    token_file.write_text(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    daemon = start_daemon(["--http-token-file", str(token_file)], token=TOKEN)
    yield daemon
    # Leave the page first, as a user closing the tab would: its event streams end before the daemon stops.
    driver.get("about:blank")
    stop_daemon(daemon)


def test_rpc_without_the_token_is_refused(guarded):
    with pytest.raises(urllib.error.HTTPError) as refused:
        guarded.call("daemon.status", token="not-the-token")
    assert refused.value.code == 401
    assert guarded.rpc("daemon.status")["devices"] == 0


def test_console_asks_for_the_token_then_goes_live(guarded, driver):
    driver.get(guarded.url)
    overlay = driver.find_element(By.ID, "token-overlay")
    wait(driver, lambda d: overlay.is_displayed(), 15, "no token prompt after 401")
    driver.find_element(By.ID, "token-input").send_keys(TOKEN)
    driver.find_element(By.ID, "token-submit").click()
    wait(driver, lambda d: not overlay.is_displayed(), 10, "token prompt stayed")
    wait(driver, lambda d: d.find_element(By.ID, "live-indicator").get_attribute("data-live") == "open", 15, "event stream not open with the token")
    driver.execute_script("window.__browserTestMarker = 'still-here';")

    guarded.rpc("devices.add", {"device": "stb-guarded", "scenario": "login"})
    wait(driver, lambda d: CODE.match(field(d, "stb-guarded", "code").text), message="row or code did not arrive over the token-guarded stream")
    assert driver.execute_script("return window.__browserTestMarker") == "still-here"
    driver.get_log("browser")  # the refused first calls are expected here


def test_token_in_the_fragment(guarded, driver, browser_log):
    driver.execute_script("sessionStorage.clear()")  # forget the token the previous test typed in
    driver.get("about:blank")
    driver.get(guarded.url + "#token=" + TOKEN)
    wait(driver, lambda d: row(d, "stb-guarded"), 15, "device list not loaded with the fragment's token")
    assert not driver.find_element(By.ID, "token-overlay").is_displayed()
    assert TOKEN not in driver.current_url, "the token stayed in the address bar"
    wait(driver, lambda d: d.find_element(By.ID, "live-indicator").get_attribute("data-live") == "open", 15)
    entries = driver.get_log("browser")
    severe = [e for e in entries if e.get("level") == "SEVERE"]
    assert not severe, f"browser console errors with a valid token: {severe}"
