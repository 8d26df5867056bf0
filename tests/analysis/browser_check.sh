#!/usr/bin/env bash
# Render the analysis report in headless Chromium and check what a reader sees:
# a screenshot that is a real picture (kept as build/report-screenshot.png), no
# image missing from the page, every navigation link leading somewhere, and "What the cluster
# buys" laid out above everything else (also on a make-run-like page from synthetic files).
#
#   bash tests/analysis/browser_check.sh                 # report from synthetic fixtures
#   bash tests/analysis/browser_check.sh results/*.h5    # report from real result files
#
# Environment: PYTHON (default /usr/bin/python3), CHROMIUM (default /usr/bin/chromium),
# CHROMIUM_WAIT seconds to wait for Chromium to appear (default 0), KEEP=1 keeps the
# temporary folder and prints its path. Prints "N passed, N failed"; exit 1 on failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export PYTHONDONTWRITEBYTECODE=1

tmp=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then
    echo "# keeping $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi

passed=0
failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && exit 0
    exit 1
}

waited=0
while [ ! -x "$CHROMIUM" ] && [ "$waited" -lt "${CHROMIUM_WAIT:-0}" ]; do
    sleep 5
    waited=$((waited + 5))
done
if [ ! -x "$CHROMIUM" ]; then
    not_ok "chromium at $CHROMIUM (install it: apt-get install chromium)"
    finish
fi
ok "chromium at $CHROMIUM"

if [ "$#" -gt 0 ]; then
    inputs=("$@")
else
    if "$PY" "$here/fixtures.py" "$tmp/in" >/dev/null && "$PY" - "$here" "$tmp/in" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import fixtures
pi = f"{sys.argv[2]}/pi.h5"
fixtures.add_paired_baseline(pi, {f"p{i:03d}": s for i, s in
                                  enumerate([0.5, 0.8, 1.5, 2.2, 3.1, 3.8, 0.9, 1.4, 2.0, 3.0, 4.6])})
fixtures.add_pipeline(pi, "p010")
fixtures.add_transfer_next(pi)
fixtures.add_dfft(pi, 4)
EOF
    then
        ok "synthetic result files written"
    else
        not_ok "synthetic result files written"
        finish
    fi
    inputs=("$tmp/in")
fi

if (cd "$root" && "$PY" -m analysis.report "${inputs[@]}" -o "$tmp/report" -q) 2>"$tmp/report.err"; then
    ok "report generated"
else
    not_ok "report generated: $(head -c 400 "$tmp/report.err")"
    finish
fi

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$tmp/profile")
url="file://$tmp/report/index.html"

timeout 180 "$CHROMIUM" "${flags[@]}" --screenshot="$tmp/shot.png" --window-size=1280,4000 \
    "$url" >"$tmp/shot.log" 2>&1
if [ -s "$tmp/shot.png" ]; then
    mkdir -p "$root/build" && cp "$tmp/shot.png" "$root/build/report-screenshot.png"
    ok "screenshot taken (kept as build/report-screenshot.png)"
else
    not_ok "screenshot taken (see chromium output: $(tail -c 300 "$tmp/shot.log"))"
    finish
fi

if "$PY" - "$tmp/shot.png" <<'EOF'
import struct, sys
import matplotlib.image as mpimg
path = sys.argv[1]
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
assert data[12:16] == b"IHDR", "no IHDR"
width, height = struct.unpack(">II", data[16:24])
assert width >= 1000 and height >= 1000, f"too small: {width}x{height}"
img = mpimg.imread(path)[..., :3]
dark = (img.mean(axis=2) < 0.9).mean()
colours = len({tuple(p) for p in (img[::16, ::16] * 255).astype(int).reshape(-1, 3)})
assert dark > 0.02, f"page is almost blank ({dark:.1%} non-white)"
assert colours > 50, f"only {colours} colours: no figures rendered"
print(f"# screenshot {width}x{height}, {dark:.1%} non-white, {colours} colours sampled")
EOF
then
    ok "screenshot is a non-trivial picture"
else
    not_ok "screenshot is a non-trivial picture"
fi

timeout 180 "$CHROMIUM" "${flags[@]}" --virtual-time-budget=10000 --dump-dom "$url" \
    >"$tmp/dom.html" 2>"$tmp/dom.log"
if [ -s "$tmp/dom.html" ]; then
    ok "DOM dumped"
else
    not_ok "DOM dumped (see chromium output: $(tail -c 300 "$tmp/dom.log"))"
    finish
fi

if "$PY" - "$tmp/dom.html" "$tmp/report" <<'EOF'
import os, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
folder = sys.argv[2]
srcs = re.findall(r"<img\b[^>]*\bsrc=\"([^\"]*)\"", dom)
assert srcs, "the page has no images"
bad = [s[:60] for s in srcs
       if not (s.startswith("data:image/png;base64,") or os.path.isfile(os.path.join(folder, s)))]
assert not bad, f"images without a source: {bad}"
assert not re.search(r'data-(images-)?missing="', dom), "the page marked an image that failed to load"
total = re.search(r'data-images-total="(\d+)"', dom)
loaded = re.search(r'data-images-loaded="(\d+)"', dom)
assert total and loaded, "the page's image check script did not run"
assert total.group(1) == loaded.group(1) == str(len(srcs)), \
    f"{loaded.group(1)} of {total.group(1)} images loaded ({len(srcs)} <img>)"
assert not re.search(r"(src|href)=\"https?://", dom), "the page refers to the network"
print(f"# {len(srcs)} images, all loaded")
EOF
then
    ok "every image on the page loaded, none from the network"
else
    not_ok "every image on the page loaded, none from the network"
fi

if "$PY" - "$tmp/dom.html" <<'EOF'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
nav = re.search(r"<nav\b[^>]*>(.*?)</nav>", dom, re.S)
assert nav, "the page has no <nav>"
targets = re.findall(r"href=\"#([^\"]+)\"", nav.group(1))
assert len(targets) >= 5, f"only {len(targets)} navigation links"
ids = set(re.findall(r"\bid=\"([^\"]+)\"", dom))
broken = [t for t in targets if t not in ids]
assert not broken, f"navigation links to nothing: {broken}"
assert "position:sticky" in dom.replace(" ", ""), "the navigation does not stay visible"
print(f"# {len(targets)} navigation links, all resolve")
EOF
then
    ok "every navigation link resolves"
else
    not_ok "every navigation link resolves"
fi

# "What the cluster buys" must be the first thing a reader sees: Chromium lays the page out and
# a probe compares the section's top with that of every other heading and box on it.
buys_first() {  # REPORT_DIR NAME
    local page="$1/index.probe.html" dom="$tmp/probe-$RANDOM.html" got
    "$PY" - "$1/index.html" "$page" <<'EOF'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = """<script>(function(){var b=document.getElementById('buys');
var top=function(e){return e.getBoundingClientRect().top+window.scrollY;};
var others=document.querySelectorAll('main h2, main .warn, main .findings, main .notes');
var ok=b!==null&&b.offsetHeight>0,first='';
for(var i=0;ok&&i<others.length;i++){if(others[i]!==b&&top(others[i])<=top(b)){ok=false;first=others[i].id||others[i].className;}}
document.body.setAttribute('data-buys-first',ok?'yes':'no, first: '+first);})();</script>"""
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", probe + "</body>"))
EOF
    timeout 180 "$CHROMIUM" "${flags[@]}" --virtual-time-budget=10000 --dump-dom "file://$page" \
        >"$dom" 2>/dev/null
    got=$(grep -o 'data-buys-first="[^"]*"' "$dom" | head -1)
    if [ "$got" = 'data-buys-first="yes"' ] && grep -q "What the cluster buys" "$dom"; then
        ok "$2: 'What the cluster buys' is laid out above everything else"
    else
        not_ok "$2: 'What the cluster buys' is laid out above everything else (${got:-no probe result})"
    fi
    rm -f "$page"
}
buys_first "$tmp/report" "the report"

# make run's page: a suite on one machine with its paired baseline, between two baselines there
if [ "$#" -eq 0 ]; then
    if "$PY" - "$here" "$tmp/run" <<'EOF'
import dataclasses, sys
sys.path.insert(0, sys.argv[1])
import fixtures
desk = dataclasses.replace(fixtures.I5, hosts=("desk",))
suite = fixtures.write_run(f"{sys.argv[2]}/suite.h5", dataclasses.replace(
    desk, baseline=False, label="suite, 4 ranks on desk", ranks_per_node=4, beta_Bps=1e10,
    transfer=True, load=True))
fixtures.add_paired_baseline(suite, {f"p{i:03d}": 1.2 + 0.2 * i for i in range(11)})
fixtures.write_run(f"{sys.argv[2]}/before.h5", dataclasses.replace(desk, label="baseline before"))
fixtures.write_run(f"{sys.argv[2]}/after.h5", dataclasses.replace(
    desk, label="baseline after", seed=4, extra_attrs={"created_utc": "2024-05-01T13:00:00Z"}))
EOF
    then
        if (cd "$root" && "$PY" -m analysis.report "$tmp/run/suite.h5" --baseline "$tmp/run/before.h5" \
                --baseline "$tmp/run/after.h5" -o "$tmp/run-report" -q) 2>"$tmp/run-report.err"; then
            buys_first "$tmp/run-report" "make run's page"
        else
            not_ok "make run's page generated: $(head -c 400 "$tmp/run-report.err")"
        fi
    else
        not_ok "make run-like result files written"
    fi
fi

finish
