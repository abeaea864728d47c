#!/usr/bin/env python3
"""Open a local HTML page in headless Chromium and report, as JSON, what it rendered.

Usage: python3 tests/browser.py PAGE.html [--screenshot OUT.png]

The Rust integration tests use this to check tallrow's static report pages
(index.html, history.html) as a browser shows them, not just as text: title,
visible text, links, each inline SVG chart's size and whether anything is drawn
outside it, horizontal overflow, plus console messages, JS exceptions, log
entries and resources that failed to load.

Chromium is driven over the DevTools protocol on --remote-debugging-pipe: it
reads commands from fd 3 and writes replies to fd 4, each a JSON object ended
by a NUL byte. So the standard library suffices (no websocket package, no port).

Stdout: one JSON object with keys title, text, links, svgs, overflow_x, tables,
headings, console, exceptions, log, failed. Exit 0 when the page loaded (even
with console errors: the caller decides); exit 2 with one line "browser.py: ..."
on stderr when Chromium is missing or fails to start, or the page does not load
in time. $CHROMIUM overrides the browser path (default /usr/bin/chromium).
"""
import base64, fcntl, json, os, select, shutil, signal, subprocess, sys, tempfile, time
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
INSTALL = "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         # Without these Chromium phones home; this machine's closed network refuses it.
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-pipe"]
LOAD_TIMEOUT, CALL_TIMEOUT = 60, 30

# What the page rendered. "outside": drawn elements whose box sticks out of the
# svg's box by more than 1 px (clipped, i.e. plotted outside the chart).
# Elements inside defs/clipPath/marker/... are not drawn by themselves, so skipped.
JS = r"""(() => {
  const txt = e => (e.innerText ?? e.textContent ?? '').trim();
  const svgs = [...document.querySelectorAll('svg')].map(svg => {
    const r = svg.getBoundingClientRect();
    const title = [...svg.children].find(c => c.localName === 'title');
    const els = [...svg.querySelectorAll('circle,ellipse,rect,path,line,polyline,polygon,text')]
      .filter(e => !e.closest('defs,clipPath,mask,marker,pattern,symbol'));
    const outside = els.filter(e => { const b = e.getBoundingClientRect();
      return b.left < r.left - 1 || b.top < r.top - 1 || b.right > r.right + 1 || b.bottom > r.bottom + 1; });
    return {label: svg.getAttribute('aria-label') || (title ? title.textContent.trim() : ''),
            width: r.width, height: r.height, elements: els.length, outside: outside.length,
            empty: r.width === 0 || r.height === 0};
  });
  return {href: location.href, ready: document.readyState, title: document.title,
    text: document.body ? document.body.innerText : '',
    links: [...document.querySelectorAll('a[href]')].map(a => ({href: a.getAttribute('href'),
      resolved: typeof a.href === 'string' ? a.href : new URL(a.getAttribute('href'), document.baseURI).href,
      text: txt(a)})),
    svgs, overflow_x: document.documentElement.scrollWidth > window.innerWidth,
    tables: document.querySelectorAll('table').length,
    headings: [...document.querySelectorAll('h1,h2,h3')].map(txt)};
})()"""


class Fail(Exception):
    """An expected failure: reported as one line on stderr, exit status 2."""


class Chromium:
    def __init__(self, exe, tmp):
        self.exe, self.tmp, self.buf, self.next_id, self.session = exe, tmp, b"", 0, None
        self.report = {"console": [], "exceptions": [], "log": [], "failed": []}
        self.requests, self.loaded = {}, False
        cmd_r, self.cmd_w = os.pipe()   # we write commands; Chromium reads them on fd 3
        self.rep_r, rep_w = os.pipe()   # Chromium writes replies on fd 4; we read them

        def to_fds_3_and_4():  # runs in the child between fork and exec
            # Move both ends above 10 first, so dup2 onto 3/4 clobbers nothing we
            # need, and never is dup2(fd, fd), which would keep close-on-exec set.
            hi_r, hi_w = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(rep_w, fcntl.F_DUPFD, 10)
            os.dup2(hi_r, 3), os.dup2(hi_w, 4), os.close(hi_r), os.close(hi_w)

        try:
            # close_fds=False: subprocess would close 3/4 after preexec_fn; Python's
            # own fds are non-inheritable anyway. Own session: kill renderers with it.
            with open(f"{tmp}/stderr.txt", "wb") as err:
                self.proc = subprocess.Popen(
                    [exe, *FLAGS, f"--user-data-dir={tmp}/profile"], stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=err,
                    preexec_fn=to_fds_3_and_4, close_fds=False, start_new_session=True)
        except OSError as e:
            raise Fail(f"cannot run {exe} ({e.strerror}); install it: {INSTALL}")
        finally:
            os.close(cmd_r), os.close(rep_w)  # else we would never see EOF when it dies

    def died(self):
        lines = Path(f"{self.tmp}/stderr.txt").read_text(errors="replace").split("\n")
        # Its last words, skipping noise from Debian's /usr/bin/chromium wrapper script.
        last = [l for l in lines if l.strip() and not l.startswith(self.exe + ":")][-1:]
        return Fail(f"chromium exited (status {self.proc.poll()})" + (f": {last[0][:200]}" if last else ""))

    def read(self, deadline):
        """The next message, or None at the deadline. Messages end with a NUL byte."""
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rep_r], [], [], left)[0]:
                return None
            chunk = os.read(self.rep_r, 1 << 20)
            if not chunk:
                time.sleep(0.2)  # let it finish exiting, for the status
                raise self.died()
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def pump(self, deadline, done):
        """Read until done(msg); events of our page on the way are collected. False at deadline."""
        while (msg := self.read(deadline)) is not None:
            if "id" not in msg and msg.get("sessionId") == self.session:
                self.event(msg["method"], msg.get("params", {}))
            if done(msg):
                return True
        return False

    def call(self, method, params=None, session=None):
        self.next_id += 1
        mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        try:
            os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        except BrokenPipeError:
            raise self.died()
        replies = []

        def ours(m):  # replies are matched by id; anything else is an event or stale
            if m.get("id") == mid:
                replies.append(m)
            return bool(replies)
        if not self.pump(time.monotonic() + CALL_TIMEOUT, ours):
            raise Fail(f"chromium did not answer {method} within {CALL_TIMEOUT} s")
        reply = replies[0]
        if "error" in reply:
            raise Fail(f"{method} failed: {reply['error'].get('message')}")
        return reply.get("result", {})

    def event(self, method, p):
        r = self.report
        if method == "Page.loadEventFired":
            self.loaded = True
        elif method == "Runtime.consoleAPICalled":
            args = [str(a.get("value", a.get("description", ""))) for a in p.get("args", [])]
            r["console"].append({"type": p.get("type"), "text": " ".join(args)})
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            r["exceptions"].append(d.get("exception", {}).get("description") or d.get("text", ""))
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            r["log"].append({"level": e.get("level"), "text": e.get("text"), "url": e.get("url", "")})
        elif method == "Network.requestWillBeSent":  # loadingFailed names only the request id
            self.requests[p["requestId"]] = p["request"]["url"]
        elif method == "Network.loadingFailed":
            r["failed"].append(self.requests.get(p["requestId"], p["requestId"]))

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the browser and all its children
        except ProcessLookupError:
            pass
        self.proc.wait()
        os.close(self.cmd_w), os.close(self.rep_r)


def render(page, screenshot, tmp):
    url = Path(page).resolve().as_uri()
    b = Chromium(CHROMIUM, tmp)
    try:
        target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = b.session = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            b.call(method, session=s)
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, s)
        b.loaded = False
        nav = b.call("Page.navigate", {"url": url}, s)
        if nav.get("errorText"):
            raise Fail(f"cannot load {url}: {nav['errorText']}")
        if not b.pump(time.monotonic() + LOAD_TIMEOUT, lambda m: b.loaded):
            raise Fail(f"{page} did not finish loading within {LOAD_TIMEOUT} s")
        res = b.call("Runtime.evaluate", {"expression": JS, "returnByValue": True}, s)
        if "exceptionDetails" in res:
            raise Fail(f"report script failed: {res['exceptionDetails'].get('text')}")
        out = res["result"]["value"]
        if out.pop("href") != url or out.pop("ready") != "complete":  # not a stray about:blank load
            raise Fail(f"{page} did not finish loading")
        if screenshot:
            m = b.call("Page.getLayoutMetrics", session=s)
            size = m.get("cssContentSize") or m["contentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
            png = b.call("Page.captureScreenshot",
                         {"format": "png", "captureBeyondViewport": True, "clip": clip}, s)["data"]
            Path(screenshot).write_bytes(base64.b64decode(png))
        return {**out, **b.report}
    finally:
        b.close()


def main(argv):
    args, screenshot = list(argv), None
    if "--screenshot" in args:
        i = args.index("--screenshot")
        if i + 1 >= len(args):
            raise Fail("--screenshot needs a path")
        screenshot = args.pop(i + 1)
        args.pop(i)
    if len(args) != 1 or args[0].startswith("-"):
        raise Fail("usage: python3 tests/browser.py PAGE.html [--screenshot OUT.png]")
    if not Path(args[0]).is_file():
        raise Fail(f"no such file: {args[0]}")
    if not os.access(CHROMIUM, os.X_OK):
        raise Fail(f"{CHROMIUM} not found; install it: {INSTALL}")
    tmp = tempfile.mkdtemp(prefix="browser-py-")
    try:
        report = render(args[0], screenshot, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Fail as e:
        print(f"browser.py: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:  # e.g. the screenshot path cannot be written
        print(f"browser.py: {e}", file=sys.stderr)
        sys.exit(2)
