"""The live web console against a real regcoded, in headless Chromium."""

import re

import pytest
from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CODE = re.compile(r"^[A-Z0-9]{4,}$")
# A login against the embedded simulator takes a few polls at 3 s.
LIVE_DEADLINE_S = 45


def wait(driver, condition, timeout=LIVE_DEADLINE_S, message=""):
    return WebDriverWait(
        driver, timeout, poll_frequency=0.1, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException, NoAlertPresentException)
    ).until(condition, message)


def row(driver, device):
    return driver.find_element(By.CSS_SELECTOR, f'tr[data-device="{device}"]')


def field(driver, device, name):
    return row(driver, device).find_element(By.CSS_SELECTOR, f'[data-field="{name}"]')


def open_console(driver, url, fragment=""):
    # A new document each time, also when only the fragment differs from the page shown.
    driver.get("about:blank")
    driver.get(url + fragment)
    wait(driver, lambda d: d.execute_script("return typeof window.__consoleLoadedAt === 'number'"), 15, "console script did not start")
    # Our own marker: it survives only if the page is never reloaded.
    driver.execute_script("window.__browserTestMarker = 'still-here';")


def assert_not_reloaded(driver):
    assert driver.execute_script("return window.__browserTestMarker") == "still-here", "the page was reloaded"


def set_viewport(driver, width, height, mobile):
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )


@pytest.fixture(autouse=True)
def desktop_viewport(driver):
    set_viewport(driver, 1280, 900, False)
    yield
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_row_and_code_appear_live_and_approve_authenticates(regcoded, driver, screenshots):
    open_console(driver, regcoded.console_url)
    wait(driver, lambda d: d.find_element(By.ID, "live-indicator").get_attribute("data-live") == "open", 15, "event stream not open")
    regcoded.rpc("devices.add", {"device": "stb-live", "scenario": "login"})

    wait(driver, lambda d: row(d, "stb-live"), message="the new device's row did not appear")
    wait(driver, lambda d: CODE.match(field(d, "stb-live", "code").text), message="no code shown for stb-live")
    shown = field(driver, "stb-live", "code").text
    assert regcoded.rpc("devices.get", {"device": "stb-live"})["code"] == shown
    # The code comes with its REGCODE status event; the state follows with the device's next snapshot.
    wait(driver, lambda d: field(d, "stb-live", "state").text == "polling", 10, "state never turned polling")
    # Countdowns are written for rows on screen: the fleets' charts may push this one below the fold.
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", row(driver, "stb-live"))
    wait(driver, lambda d: field(d, "stb-live", "expiry").text.startswith("expires in "), 5, "no countdown on the row")
    assert "/activate" in field(driver, "stb-live", "activation").text
    assert_not_reloaded(driver)

    approve = row(driver, "stb-live").find_element(By.CSS_SELECTOR, 'button[data-action="approve"]')
    wait(driver, lambda d: approve.is_displayed() and approve.is_enabled(), 10, "approve button not usable")
    screenshots(driver, "1280-polling")
    approve.click()
    wait(driver, lambda d: "approved" in field(d, "stb-live", "result").text, 15, "approval not confirmed inline")
    wait(driver, lambda d: field(d, "stb-live", "state").text == "authenticated", message="state never turned authenticated")
    wait(driver, lambda d: field(d, "stb-live", "code").text == "no code", 10, "the used code is still shown")
    assert_not_reloaded(driver)
    screenshots(driver, "1280")


def test_an_oauth_device_shows_its_user_code_and_page_and_approves(regcoded, driver, screenshots):
    open_console(driver, regcoded.console_url)
    wait(driver, lambda d: d.find_element(By.ID, "live-indicator").get_attribute("data-live") == "open", 15, "event stream not open")
    regcoded.rpc("devices.add", {"device": "tv-oauth", "scenario": "login", "protocol": "oauth-device"})

    user_code = re.compile(r"^[A-Z]{4}-[A-Z]{4}$")
    wait(driver, lambda d: user_code.match(field(d, "tv-oauth", "code").text), message="no user code shown for tv-oauth")
    shown = field(driver, "tv-oauth", "code").text
    assert regcoded.rpc("devices.get", {"device": "tv-oauth"})["code"] == shown
    # The page an OAuth device names itself (its verification_uri), not Adobe's activation page.
    wait(driver, lambda d: field(d, "tv-oauth", "activation").text.endswith("/device"), 10, "no verification page on the row")
    approve = row(driver, "tv-oauth").find_element(By.CSS_SELECTOR, 'button[data-action="approve"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", row(driver, "tv-oauth"))
    wait(driver, lambda d: approve.is_displayed() and approve.is_enabled(), 10, "approve button not usable")
    approve.click()
    wait(driver, lambda d: field(d, "tv-oauth", "state").text == "authenticated", message="state never turned authenticated")
    # The row's Log in drives an OAuth device with its own verb (its AccessEnabler calls are refused).
    row(driver, "tv-oauth").find_element(By.CSS_SELECTOR, 'button[data-action="login"]').click()
    wait(driver, lambda d: "oauth.login accepted" in field(d, "tv-oauth", "result").text, 10, "Log in did not use oauth.login")
    assert_not_reloaded(driver)
    screenshots(driver, "1280-oauth")


def test_device_page_shows_timeline_polls_and_live_events(regcoded, driver, screenshots):
    regcoded.rpc("devices.add", {"device": "stb-timeline", "scenario": "login"})
    open_console(driver, regcoded.console_url)
    wait(driver, lambda d: CODE.match(field(d, "stb-timeline", "code").text), message="no code for stb-timeline")
    code = field(driver, "stb-timeline", "code").text
    regcoded.rpc("simulator.approve", {"code": code})

    row(driver, "stb-timeline").find_element(By.CSS_SELECTOR, 'a[data-field="name"]').click()
    wait(driver, lambda d: d.find_element(By.ID, "view-device").is_displayed(), 10, "device page not shown")
    assert driver.current_url.endswith("#/device/stb-timeline")

    def timeline_text(d, event):
        return [li.text for li in d.find_elements(By.CSS_SELECTOR, f'#timeline li[data-event="{event}"]')]

    wait(driver, lambda d: any("REGCODE" in t and code in t for t in timeline_text(d, "status")), message="no REGCODE status in the timeline")
    wait(driver, lambda d: any("status=1" in t for t in timeline_text(d, "setAuthenticationStatus")), message="no successful setAuthenticationStatus")
    wait(driver, lambda d: d.find_element(By.ID, "device-state").text == "authenticated", 15, "device page state not authenticated")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#polls-body tr")) >= 1, 15, "no polls listed")
    sequences = [int(li.get_attribute("data-seq")) for li in driver.find_elements(By.CSS_SELECTOR, "#timeline li")]
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences), "timeline out of order or duplicated"

    # An action from the page shows up live in its timeline.
    before = len(driver.find_elements(By.CSS_SELECTOR, "#timeline li"))
    assert driver.find_element(By.ID, "device-resource").get_attribute("value") == "REF30"
    driver.find_element(By.ID, "device-authorize").click()
    wait(driver, lambda d: "getAuthorization REF30 accepted" in d.find_element(By.ID, "device-result").text, 15, "authorize result not shown")
    wait(
        driver,
        lambda d: d.find_elements(By.CSS_SELECTOR, '#timeline li[data-event="setToken"], #timeline li[data-event="tokenRequestFailed"]'),
        message="no authorization answer in the timeline",
    )
    assert len(driver.find_elements(By.CSS_SELECTOR, "#timeline li")) > before
    screenshots(driver, "1280-device")

    # Log out: the device says it is no longer authenticated.
    driver.find_element(By.ID, "device-logout").click()
    wait(driver, lambda d: "logout accepted" in d.find_element(By.ID, "device-result").text, 15, "logout result not shown")
    wait(driver, lambda d: d.find_element(By.ID, "device-state").text != "authenticated", message="still authenticated after log out")

    # Reset asks first, then the login scenario starts over with a new code.
    driver.find_element(By.ID, "device-reset").click()
    wait(driver, lambda d: d.switch_to.alert, 5, "reset did not ask for confirmation").accept()
    wait(driver, lambda d: d.find_element(By.ID, "device-result").text == "reset", 15, "reset result not shown")
    wait(driver, lambda d: CODE.match(d.find_element(By.ID, "device-code").text) and d.find_element(By.ID, "device-code").text != code,
         message="no new code after reset")


def test_provider_picker_and_cancel(regcoded, driver):
    regcoded.rpc("devices.add", {"device": "stb-picker", "scenario": "idle"})
    open_console(driver, regcoded.console_url)
    login = wait(driver, lambda d: row(d, "stb-picker").find_element(By.CSS_SELECTOR, 'button[data-action="login"]'), 15)
    login.click()
    picks = wait(
        driver,
        lambda d: row(d, "stb-picker").find_elements(By.CSS_SELECTOR, '[data-field="picker"] button[data-action="pick"]'),
        message="no provider picker after log in",
    )
    assert all(b.is_displayed() for b in picks)
    mvpd = picks[0].get_attribute("data-mvpd")
    assert mvpd
    picks[0].click()
    wait(driver, lambda d: CODE.match(field(d, "stb-picker", "code").text), message="no code after picking a provider")
    wait(driver, lambda d: not field(d, "stb-picker", "picker").is_displayed(), 10, "picker still shown")
    assert regcoded.rpc("devices.get", {"device": "stb-picker"})["mvpd"] == mvpd

    # Cancel from the device page: polling stops and the code goes.
    driver.find_element(By.CSS_SELECTOR, 'tr[data-device="stb-picker"] a[data-field="name"]').click()
    wait(driver, lambda d: d.find_element(By.ID, "device-cancel").is_displayed(), 10)
    driver.find_element(By.ID, "device-cancel").click()
    wait(
        driver,
        lambda d: any("Provider Not Selected" in li.text for li in d.find_elements(By.CSS_SELECTOR, '#timeline li[data-event="setAuthenticationStatus"]')),
        message="cancel did not reach the timeline",
    )
    wait(driver, lambda d: regcoded.rpc("devices.get", {"device": "stb-picker"})["code"] is None, 15, "code kept after cancel")
    wait(driver, lambda d: d.find_element(By.ID, "device-code").text == "no code", 10, "device page still shows the code")


def test_natural_sort_and_filter(regcoded, driver):
    for name in ("sort-10", "sort-2", "sort-1"):
        regcoded.rpc("devices.add", {"device": name, "scenario": "idle"})
    open_console(driver, regcoded.console_url)
    wait(driver, lambda d: all(row(d, n) for n in ("sort-1", "sort-2", "sort-10")), 15)
    order = [tr.get_attribute("data-device") for tr in driver.find_elements(By.CSS_SELECTOR, "tr[data-device^='sort-']")]
    assert order == ["sort-1", "sort-2", "sort-10"]

    box = driver.find_element(By.ID, "filter")
    box.send_keys("sort-1")
    wait(driver, lambda d: not row(d, "sort-2").is_displayed(), 5, "filter did not hide sort-2")
    assert row(driver, "sort-1").is_displayed() and row(driver, "sort-10").is_displayed()
    box.clear()
    box.send_keys("authenticated")
    wait(driver, lambda d: not row(d, "sort-1").is_displayed() and not row(d, "sort-10").is_displayed(), 5, "state filter")
    for tr in driver.find_elements(By.CSS_SELECTOR, "tr[data-device]"):
        if tr.is_displayed():
            assert tr.find_element(By.CSS_SELECTOR, '[data-field="state"]').text == "authenticated"
    box.clear()
    driver.execute_script("arguments[0].dispatchEvent(new Event('input'))", box)
    wait(driver, lambda d: row(d, "sort-2").is_displayed(), 5, "clearing the filter")


def test_add_device_form_and_errors_inline(regcoded, driver):
    open_console(driver, regcoded.console_url)
    driver.find_element(By.CSS_SELECTOR, "#add-panel > summary").click()
    name = driver.find_element(By.ID, "add-name")
    wait(driver, lambda d: name.is_displayed(), 5)
    name.send_keys("stb-form")
    driver.find_element(By.ID, "add-scenario").send_keys("idle")
    driver.find_element(By.ID, "add-submit").click()
    wait(driver, lambda d: row(d, "stb-form"), 15, "added device has no row")
    wait(driver, lambda d: "added stb-form" in d.find_element(By.ID, "add-result").text, 5)
    assert regcoded.rpc("devices.get", {"device": "stb-form"})["device"] == "stb-form"
    # The same name again: the daemon's conflict error is shown, not swallowed.
    name.send_keys("stb-form")
    driver.find_element(By.ID, "add-submit").click()
    wait(driver, lambda d: "error 1003" in d.find_element(By.ID, "add-result").text, 10, "conflict not shown inline")
    assert driver.find_element(By.ID, "add-result").get_attribute("data-kind") == "error"
    assert_not_reloaded(driver)


def test_phone_width_has_no_horizontal_scroll(regcoded, driver, screenshots):
    set_viewport(driver, 375, 812, True)
    regcoded.rpc("devices.add", {"device": "stb-phone", "scenario": "login"})
    open_console(driver, regcoded.console_url)
    assert driver.execute_script("return window.innerWidth") == 375
    wait(driver, lambda d: CODE.match(field(d, "stb-phone", "code").text), message="no code for stb-phone")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 375
    phone_row = row(driver, "stb-phone")
    for action in ("approve", "login"):
        button = phone_row.find_element(By.CSS_SELECTOR, f'button[data-action="{action}"]')
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
        assert button.is_displayed(), f"{action} button hidden at 375 px"
        assert button.size["height"] >= 40 and button.size["width"] >= 40, f"{action} tap target too small: {button.size}"
    screenshots(driver, "375")

    driver.execute_script("location.hash = '#/device/stb-phone'")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '#timeline li[data-event="status"]'), message="device page timeline at 375 px")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 375
    for button_id in ("device-login", "device-approve"):
        assert driver.find_element(By.ID, button_id).is_displayed()
    screenshots(driver, "375-device")
    assert_not_reloaded(driver)


def test_browser_console_has_no_severe_entries(regcoded, driver, browser_log):
    open_console(driver, regcoded.console_url)
    wait(driver, lambda d: row(d, "stb-live"), 15)
    driver.execute_script("location.hash = '#/device/stb-live'")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline li"), 15)
    driver.execute_script("location.hash = '#/'")
    wait(driver, lambda d: d.find_element(By.ID, "view-main").is_displayed(), 5)
    browser_log.extend(driver.get_log("browser"))
    severe = [entry for entry in browser_log if entry.get("level") == "SEVERE"]
    assert not severe, f"browser console errors: {severe}"
