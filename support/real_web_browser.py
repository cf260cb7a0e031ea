"""The browser image's Chromium opening pages of the stand-in web, and what it saw (JSON lines).

``browse(url, ...)`` is a shell command for a client container of the browser image
(``RealWeb.client`` or ``real_web.proxied``): it trusts the CA at ``CA_PATH`` in a fresh NSS
database (Chromium on Linux trusts nothing else, as ``web/browser.py`` does for a run's CA), then
drives one Chromium with the image's own playwright-core (Playwright MCP's), over HTTP/2 or, with
``http1``, HTTP/1.1 only (``--disable-http2``), through ``$HTTPS_PROXY`` with ``proxy``, to each
URL in turn. For each it prints one JSON line (``seen`` reads them):

* ``chain``: the URLs of the navigation's redirect chain, first to last; ``status``, ``url``;
* ``tls``: the TLS version Chromium negotiated (``TLS 1.3``) and the certificate's issuer;
* ``protocol``: what the page's script read of its own navigation (``protocol: h2``);
* ``status_text``: ``<p id="status">``'s text once the page's script is done with it (the pages
  whose scripts fetch); ``text``: the page's text (its first 4000 characters).

With ``stay_until``, the last page stays open until the test says (what ``/one-chunk`` needs to
leave its download unread for a while: closing the browser resets the stream).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from inspect_gaia.image_layout import CHROMIUM, PLAYWRIGHT_MCP_DIR
from inspect_gaia.web.browser import CHROMIUM_ARGS
from support.real_web import CA_PATH

SCRIPT = r"""
const fs = require('fs');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const options = JSON.parse(process.argv[2]);
(async () => {
  const launch = { executablePath: options.chromium, chromiumSandbox: false, args: options.args };
  const proxy = process.env.HTTPS_PROXY || process.env.https_proxy;
  if (options.proxy) launch.proxy = { server: proxy, bypass: 'localhost,127.0.0.1' };
  const browser = await chromium.launch(launch);
  try {
    const page = await browser.newPage();
    for (const url of options.urls) {
      const response = await page.goto(url, { waitUntil: 'load', timeout: 60000 });
      await page.waitForFunction(() => {
        const p = document.getElementById('protocol'), s = document.getElementById('status');
        return (!p || !p.textContent.includes('not yet')) && (!s || s.dataset.done === 'yes');
      }, null, { timeout: 60000 });
      const chain = [];
      for (let r = response.request(); r; r = r.redirectedFrom()) chain.unshift(r.url());
      const security = await response.securityDetails();
      const text = (id) => page.evaluate(i => (document.getElementById(i) || {}).textContent, id);
      console.log(JSON.stringify({
        url: page.url(), status: response.status(), chain,
        tls: security ? { protocol: security.protocol, issuer: security.issuer } : null,
        protocol: await text('protocol'), status_text: await text('status'),
        text: (await page.evaluate(() => document.body.innerText)).slice(0, 4000),
      }));
    }
    for (let i = 0; options.stay_until && i < 1200 && !fs.existsSync(options.stay_until); i++) {
      await page.waitForTimeout(100);
    }
  } finally {
    await browser.close();
  }
})().catch(e => { console.error(String(e)); process.exit(1); });
"""


def browse(
    url: str, *more: str, http1: bool = False, proxy: bool = False, stay_until: str = ""
) -> str:
    """A shell command: one Chromium opens ``url`` and ``more`` in turn; a JSON line for each.

    ``stay_until``: a path; the last page stays open, as a browser left on it does, until a file
    is there (two minutes at most).
    """
    options = {
        "chromium": CHROMIUM,
        "args": [*CHROMIUM_ARGS, *(["--disable-http2"] if http1 else [])],
        "proxy": proxy,
        "urls": [url, *more],
        "stay_until": stay_until,
    }
    core = f"{PLAYWRIGHT_MCP_DIR}/node_modules/playwright-core"
    return f"""set -e
export HOME=$(mktemp -d) PLAYWRIGHT_CORE={core}
mkdir -p "$HOME/.pki/nssdb"
certutil -d "sql:$HOME/.pki/nssdb" -N --empty-password
certutil -d "sql:$HOME/.pki/nssdb" -A -t C,, -n real-web -i {CA_PATH}
cat > "$HOME/browse.js" <<'JS'
{SCRIPT}
JS
cd "$HOME" && node browse.js {shlex.quote(json.dumps(options))}"""


def seen(output: str) -> list[dict[str, Any]]:
    """What ``browse`` printed: one dict per page, in order."""
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]
