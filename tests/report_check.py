#!/usr/bin/env python3
"""Checks one page of `shardsim ... --report` against the command's --json output.

Usage: report_check.py PAGE.html JSON_OUTPUT [--dom DUMPED_DOM] [--min-svg N] [--min-tables N]

PAGE.html is the file as written, DUMPED_DOM (optional) the DOM a headless
browser dumped after loading a copy with tests/cli_report.sh's probe script.
Checks, printing every failure and exiting 1 on any:
  - the page is self-contained: no <link>, <img>, <iframe>, <object>, no src=,
    no http(s) href or url(), no <script> but the embedded JSON;
  - the embedded JSON (<script type="application/json" id="shardsim-json">)
    equals the --json output;
  - every number cell (td.num) of the tables: its data-value is the JSON value
    at its table's data-source, row and key, and the text shown is that value
    times data-scale as rounded on the page;
  - with --dom: the same cells in the rendered DOM, and the probe's report:
    no errors, every <svg> rendered (a box with an area, paths drawn).
"""
import json
import math
import re
import sys
from html.parser import HTMLParser


def json_at(o, key):
    """report.h's dotted path: at each level the whole rest first, then prefixes."""
    if key == "":
        return o
    if isinstance(o, dict) and key in o:
        return o[key]
    parts = key.split(".")
    for i in range(1, len(parts)):
        head, rest = ".".join(parts[:i]), ".".join(parts[i:])
        child = None
        if isinstance(o, list):
            if head.isdigit() and int(head) < len(o):
                child = o[int(head)]
        elif isinstance(o, dict):
            child = o.get(head)
        if child is not None:
            found = json_at(child, rest)
            if found is not None:
                return found
    if isinstance(o, list) and key.isdigit() and int(key) < len(o):
        return o[int(key)]
    return None


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables = []  # (source, [cells])
        self.cell = None
        self.script = None  # (attrs, text) being read
        self.scripts = []
        self.tags = []
        self.svgs = 0
        self.probe = None
        self.in_probe = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table":
            self.tables.append((a.get("data-source"), []))
        elif tag == "td" and "num" in (a.get("class") or "").split():
            self.cell = {"attrs": a, "text": ""}
        elif tag == "script":
            self.script = [a, ""]
        elif tag == "svg":
            self.svgs += 1
        elif tag == "pre" and a.get("id") == "probe":
            self.in_probe = True
            self.probe = ""

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.tables[-1][1].append(self.cell)
            self.cell = None
        elif tag == "script" and self.script is not None:
            self.scripts.append(tuple(self.script))
            self.script = None
        elif tag == "pre":
            self.in_probe = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data
        if self.script is not None:
            self.script[1] += data
        if self.in_probe:
            self.probe += data


def check_cells(page, out, where, fails):
    n = 0
    for source, cells in page.tables:
        rows = json_at(out, source or "")
        for c in cells:
            a = c["attrs"]
            row, key = int(a["data-row"]), a["data-key"]
            r = rows[row] if isinstance(rows, list) else rows
            want = json_at(r, key)
            got = float(a["data-value"])
            if not isinstance(want, (int, float)) or isinstance(want, bool) or got != float(want):
                fails.append(f"{where}: table {source!r} row {row} {key}: page {a['data-value']}, --json {want!r}")
                continue
            text = c["text"].strip()
            scale = float(a["data-scale"])
            shown = float(text)
            dec = len(text.split(".")[1]) if "." in text and "e" not in text.lower() else None
            exact = want * scale
            if dec is not None:
                ok = abs(shown - exact) <= 0.5 * 10 ** -dec * (1 + 1e-9) + 1e-12 * abs(exact)
            elif re.fullmatch(r"-?\d+", text) and abs(exact) < 1e6:
                ok = abs(shown - exact) <= 0.5 + 1e-9 * abs(exact)
            else:  # %.6g
                ok = math.isclose(shown, exact, rel_tol=5e-6, abs_tol=1e-300)
            if not ok:
                fails.append(f"{where}: table {source!r} row {row} {key}: shows {text}, --json {want} x {scale}")
            n += 1
    return n


def main():
    args = sys.argv[1:]
    dom_path, min_svg, min_tables = None, 0, 1
    if "--dom" in args:
        i = args.index("--dom")
        dom_path = args[i + 1]
        del args[i:i + 2]
    if "--min-svg" in args:
        i = args.index("--min-svg")
        min_svg = int(args[i + 1])
        del args[i:i + 2]
    if "--min-tables" in args:
        i = args.index("--min-tables")
        min_tables = int(args[i + 1])
        del args[i:i + 2]
    page_path, json_path = args
    html = open(page_path, encoding="utf-8").read()
    out = json.load(open(json_path, encoding="utf-8"))
    fails = []
    page = Page()
    page.feed(html)
    page.close()

    for tag, a in page.tags:
        if tag in ("link", "img", "iframe", "object", "embed", "base"):
            fails.append(f"external-asset element <{tag}>")
        if "src" in a:
            fails.append(f"<{tag}> has src={a['src']!r}")
        for k, v in a.items():
            if k.startswith("on"):
                fails.append(f"<{tag}> has an event attribute {k}")
            if v and re.search(r"^\s*(https?:|//|javascript:)", v) and k in ("href", "xlink:href", "action"):
                fails.append(f"<{tag}> {k}={v!r} leaves the page")
    if re.search(r"url\(\s*['\"]?(https?:|//)", html) or "@import" in html:
        fails.append("CSS loads something from outside the page")
    embedded = [s for s in page.scripts if s[0].get("id") == "shardsim-json"]
    others = [s for s in page.scripts if s[0].get("id") != "shardsim-json"]
    if others:
        fails.append(f"{len(others)} script element(s) besides the embedded JSON")
    if len(embedded) != 1 or embedded[0][0].get("type") != "application/json":
        fails.append("no single <script type=application/json id=shardsim-json>")
    elif json.loads(embedded[0][1]) != out:
        fails.append("the embedded JSON differs from the --json output")
    if len(page.tables) < min_tables:
        fails.append(f"{len(page.tables)} tables, expected at least {min_tables}")
    if page.svgs < min_svg:
        fails.append(f"{page.svgs} <svg>, expected at least {min_svg}")
    ncells = check_cells(page, out, "file", fails)
    if ncells == 0:
        fails.append("no number cell to check")

    if dom_path:
        dom = Page()
        dom.feed(open(dom_path, encoding="utf-8").read())
        dom.close()
        if check_cells(dom, out, "browser DOM", fails) != ncells:
            fails.append("the browser's DOM has other number cells than the file")
        if dom.probe is None:
            fails.append("the probe script did not run (no <pre id=probe> in the dumped DOM)")
        else:
            probe = json.loads(dom.probe)
            for e in probe["errors"]:
                fails.append(f"browser error: {e}")
            if probe["svgs"] != page.svgs or len(probe["rendered"]) != page.svgs:
                fails.append(f"browser saw {probe['svgs']} svg, the file has {page.svgs}")
            for i, s in enumerate(probe["rendered"]):
                if not (s["width"] > 10 and s["height"] > 10 and s["shapes"] > 0 and s["visible"]):
                    fails.append(f"svg {i} not rendered: {s}")
    for f in fails:
        print("FAIL", page_path + ":", f)
    if not fails:
        print(f"ok {page_path}: {ncells} numbers equal the --json output, {page.svgs} svg, {len(page.tables)} tables"
              + (", rendered in the browser" if dom_path else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
