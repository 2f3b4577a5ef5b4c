"""The operator console in a real browser (headless Chromium through Debian's chromedriver).

Run by Tests/WorkerTests/ConsoleBrowserTests.swift against an intake, workers and the simulator it started:
signs in, reads the overview, replays a failure group and waits to see the request's deliveries sent, checks
that a partner's hostile name renders as text, that a partner key rotated with an overlap is shown until
dismissed and its previous key can be ended, and that a POST without the CSRF token is refused. Prints one
JSON object with what it read; exits non-zero on the first failed check. With --screenshots DIR, saves a PNG
of each page at 1,280 px and the overview at a phone's width.
"""
import argparse
import json
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def fail(message):
    print(json.dumps({"ok": False, "error": message}))
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,1000", "--hide-scrollbars"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--mini-app", required=True)
    parser.add_argument("--hostile-mini-app", required=True)
    parser.add_argument("--hostile-name", required=True)
    parser.add_argument("--request-id", required=True)
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    read = {"ok": True}
    driver = browser()
    wait = WebDriverWait(driver, 20)

    def shot(name):
        if args.screenshots:
            time.sleep(0.3)
            driver.save_screenshot(f"{args.screenshots}/console-{name}.png")

    # The page re-renders every 5 s (polling), so elements are read and clicked by selector in one script call,
    # never held across calls (they would go stale).
    def text_of(selector):
        return driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : null",
                                     selector)

    def texts_of(selector):
        return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)",
                                     selector)

    def click(selector):
        wait.until(lambda d: text_of(selector) is not None)
        driver.execute_script("document.querySelector(arguments[0]).click()", selector)

    def wait_text(selector, timeout=20):
        WebDriverWait(driver, timeout).until(lambda d: text_of(selector) is not None)
        return text_of(selector)

    def open_page(fragment, title, ready_id=None):
        driver.get(args.url + "/console/#/" + fragment)
        wait.until(lambda d: text_of("main h1") == title)
        if ready_id:
            wait_text("#" + ready_id)

    try:
        # Not signed in: the page sends the browser to the sign-in form.
        driver.get(args.url + "/console/")
        wait.until(EC.url_contains("/console/login"))
        driver.find_element(By.ID, "token").send_keys("not-the-token")
        driver.find_element(By.ID, "signin").click()
        wait.until(EC.presence_of_element_located((By.ID, "login-error")))
        shot("login")
        driver.find_element(By.ID, "token").send_keys(args.token)
        driver.find_element(By.ID, "signin").click()
        wait.until(EC.presence_of_element_located((By.ID, "overview-pending")))
        cookie = driver.get_cookie("herald_console")
        check(cookie is not None and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict",
              f"session cookie attributes: {cookie}")
        check(driver.execute_script("return document.cookie.indexOf('herald_console') < 0"),
              "the session cookie is readable from script")

        # Overview: the figures as shown.
        def figure(element_id):
            return text_of("#" + element_id)
        read["overview"] = {name: figure("overview-" + name)
                            for name in ("pending", "scheduled", "leased", "failed", "sent", "workers")}
        check(len(driver.find_elements(By.CSS_SELECTOR, "#overview-chart rect")) > 0, "the chart has no bars")
        shot("overview")

        # A hostile partner name is text, never markup.
        open_page("partners", "Partners", "partner-panel")
        cells = texts_of("td.partner-name")
        check(args.hostile_name in cells, f"the hostile name is not shown as text: {cells}")
        check(not texts_of("main img[src='x']"), "the hostile name became an element")
        # Each partner's delivery and open rates, as shown (the Swift test checks the figures).
        read["partnerRates"] = [texts_of("td.partner-delivered"), texts_of("td.partner-opened")]
        try:
            driver.switch_to.alert
            fail("an alert ran")
        except NoAlertPresentException:
            pass
        shot("partners")

        # A key rotated with a day's overlap: shown once, and kept on screen past the page's 5 s poll until dismissed;
        # the row then says until when the old key works and offers to end it.
        click(f"button.rotate-key[data-mini-app='{args.mini_app}']")
        wait_text("#rotate-overlap")
        driver.execute_script("document.querySelector('#rotate-overlap').value = '86400'")
        shot("rotate-confirm")
        click("#confirm-yes")
        key = wait_text("#new-key")
        read["previousKeyState"] = text_of("#previous-key-state")
        time.sleep(6)
        check(text_of("#new-key") == key, "the new key was swept away by the page's poll")
        read["newKey"] = key
        click("#key-done")
        wait.until(lambda d: text_of(f"button.end-previous-key[data-mini-app='{args.mini_app}']") is not None)
        read["partnerState"] = [t for t in texts_of("td") if t.startswith("active; previous key until")]
        click(f"button.end-previous-key[data-mini-app='{args.mini_app}']")
        read["endPreviousConfirm"] = wait_text("#confirm-text")
        click("#confirm-yes")
        wait.until(lambda d: text_of(f"button.end-previous-key[data-mini-app='{args.mini_app}']") is None)

        # Suspended from the page, then resumed: the row says so meanwhile, and offers the other button.
        click(f"button.suspend[data-mini-app='{args.mini_app}']")
        read["suspendConfirm"] = wait_text("#confirm-text")
        click("#confirm-yes")
        wait.until(lambda d: text_of(f"button.resume[data-mini-app='{args.mini_app}']") is not None)
        read["suspendedState"] = [t for t in texts_of("td") if t.startswith("suspended since")]
        shot("partner-suspended")
        click(f"button.resume[data-mini-app='{args.mini_app}']")
        wait_text("#confirm-text")
        click("#confirm-yes")
        wait.until(lambda d: text_of(f"button.suspend[data-mini-app='{args.mini_app}']") is not None)

        # The webhook secret likewise: rotated with an hour's overlap, shown once, then the overlap ended.
        click(f"button.rotate-webhook-secret[data-mini-app='{args.mini_app}']")
        wait_text("#rotate-secret-overlap")
        driver.execute_script("document.querySelector('#rotate-secret-overlap').value = '3600'")
        click("#confirm-yes")
        read["newWebhookSecret"] = wait_text("#new-webhook-secret")
        read["previousWebhookSecretState"] = text_of("#previous-webhook-secret-state")
        click("#webhook-secret-done")
        click(f"button.end-previous-webhook-secret[data-mini-app='{args.mini_app}']")
        read["endPreviousWebhookSecretConfirm"] = wait_text("#confirm-text")
        click("#confirm-yes")
        wait.until(lambda d: text_of(f"button.end-previous-webhook-secret[data-mini-app='{args.mini_app}']") is None)

        # The audit page lists what was just done, by this console session.
        open_page("audit", "Audit")
        wait.until(lambda d: "partner.previous_webhook_secret_ended" in texts_of("td.audit-action"))
        read["auditActions"] = texts_of("td.audit-action")[:8]
        shot("audit")

        # A POST without the CSRF token is refused, from the signed-in page itself.
        status = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/api/admin/console/failures/replay', {method: 'POST', credentials: 'same-origin',
                  headers: {'Content-Type': 'application/json'},
                  body: JSON.stringify({miniAppId: arguments[0], outcome: 'failed', dryRun: false})})
              .then(r => done(r.status), e => done(String(e)));
        """, args.mini_app)
        check(status == 403, f"a POST without the CSRF token answered {status}")
        read["postWithoutCsrf"] = status

        # Failures: the group, a dry run, the replay.
        open_page("failures?partner=" + args.mini_app, "Failures", "replay-panel")
        wait_text("button.replay")
        shot("failures")
        click("button.replay")
        text = wait_text("#confirm-text")
        read["dryRun"] = text
        check(text.startswith("Dry run: 1 of 1"), f"dry run said: {text}")
        shot("replay-confirm")
        click("#confirm-yes")
        result = wait_text("#replay-result")
        read["replay"] = result
        check(result.startswith("Replayed 1 of 1"), f"replay said: {result}")

        # The request's page shows it sent once the workers deliver the replayed row (the page polls).
        open_page("request?id=" + args.request_id, "Request", "request-sent")
        try:
            WebDriverWait(driver, 40).until(lambda d: text_of("#request-sent") == "1")
        except TimeoutException:
            fail("the replayed delivery was not shown sent: " + str(text_of("#request-sent")))
        read["requestTitle"] = text_of("#request-title")
        read["requestSent"] = text_of("#request-sent")
        shot("request")

        open_page("requests?partner=" + args.mini_app, "Requests")
        shot("requests")
        open_page("workers", "Workers")
        shot("workers")
        open_page("tokens", "Token invalidations")
        shot("tokens")
        open_page("activities", "Live Activities")
        shot("activities")
        open_page("webhooks", "Failed webhooks", "webhook-panel")
        shot("webhooks")

        # A phone's width: the same overview, usable.
        driver.set_window_size(390, 844)
        open_page("overview", "Overview", "overview-pending")
        width = driver.execute_script("return document.documentElement.scrollWidth")
        check(width <= 400, f"the overview is {width} px wide at a phone's width")
        shot("overview-phone")

        # Sign-out ends the session: the API refuses the old cookie.
        driver.set_window_size(1280, 1000)
        open_page("overview", "Overview", "overview-pending")
        click("#signout")
        wait.until(EC.url_contains("/console/login"))
        driver.add_cookie({"name": "herald_console", "value": cookie["value"], "path": "/"})
        status = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/api/admin/console/overview', {credentials: 'same-origin'}).then(r => done(r.status));
        """)
        check(status == 401, f"the signed-out session answered {status}")
    finally:
        driver.quit()
    print(json.dumps(read))


if __name__ == "__main__":
    main()
