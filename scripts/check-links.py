#!/usr/bin/env python3
"""Check every relative link and anchor of the manual.

    scripts/check-links.py            the Markdown sources: README.md, configs/README.md, docs/**/*.md
    scripts/check-links.py --html DIR the book mdBook built into DIR (make docs)

Markdown: every relative link or image must name a file that exists, and a `#fragment` a heading
(or an explicit `id`/`name`) of the page it points to, with the anchors mdBook and GitHub give
headings. A book page (docs/) may only link inside docs/ and only to files, since the built book
holds nothing else: a source file or a folder is named in code (`src/routing/nue.rs`) instead. Every
page under docs/ must be listed in docs/SUMMARY.md (mdBook renders nothing else), every
`{{#include}}` must name a file, and every experiment script of configs/ must be in both indexes of
the reproductions (configs/README.md and docs/reproductions.md).

HTML: every relative href and src of every built page must name a file of the build, and a
fragment an id of that page.

Exit code 0 when everything holds, 1 with one line per broken link otherwise. Standard library only.
"""

import html.parser
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# Inline links and images: [text](target "title") and ![alt](target). Targets with spaces are
# written <...>; hxsim's docs have none, so the target ends at whitespace or ')'.
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*?(?:href|src)=\"([^\"]+)\"", re.I)
HTML_ID = re.compile(r"<[a-z]+\s[^>]*?(?:id|name)=\"([^\"]+)\"", re.I)
INCLUDE = re.compile(r"\{\{#include\s+([^\s}:]+)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")


def blank_fences(lines):
    """The lines with fenced code blocks blanked."""
    out, fence = [], None
    for line in lines:
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(line)
    return out


def strip_code(lines):
    """The lines with fenced blocks blanked and inline code spans removed (links there are text)."""
    return [re.sub(r"(`+)(?:(?!\1).)+?\1", "", line) for line in blank_fences(lines)]


def heading_text(raw):
    """A heading's text as rendered: code marks, emphasis and link targets dropped."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    t = re.sub(r"<[^>]+>", "", t)
    return t.replace("`", "").replace("*", "").replace("\\", "")


def slug(text):
    """The anchor of a heading, as mdBook (normalize_id) and GitHub make it."""
    out = []
    for ch in heading_text(text).strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def anchors(path, cache={}):
    """Every anchor of a Markdown page: its headings (duplicates numbered) and explicit ids."""
    if path not in cache:
        seen, ids = {}, set()
        lines = path.read_text(encoding="utf-8").split("\n")
        for line, outside in zip(lines, blank_fences(lines)):
            m = HEADING.match(outside)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                ids.add(s if n == 0 else f"{s}-{n}")
            ids.update(HTML_ID.findall(line))
        cache[path] = ids
    return cache[path]


def is_external(target):
    return re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) is not None or target.startswith("//")


def markdown_pages():
    pages = [ROOT / "README.md", ROOT / "configs" / "README.md"]
    pages += sorted(p for p in DOCS.rglob("*.md"))
    return [p for p in pages if p.exists()]


def summary_pages():
    text = (DOCS / "SUMMARY.md").read_text(encoding="utf-8")
    return {(DOCS / t).resolve() for t in INLINE.findall(text)}


def check_markdown():
    errors = []
    listed = summary_pages()
    for page in markdown_pages():
        rel = page.relative_to(ROOT)
        in_book = DOCS in page.parents
        if in_book and page.name != "SUMMARY.md" and page.resolve() not in listed:
            errors.append(f"{rel}: not in docs/SUMMARY.md (mdBook would not render it)")
        raw = page.read_text(encoding="utf-8").split("\n")
        for no, line in enumerate(strip_code(raw), 1):
            targets = INLINE.findall(line) + HTML_LINK.findall(line)
            m = REFDEF.match(line)
            if m:
                targets.append(m.group(2))
            for target in targets:
                err = check_target(page, target, in_book)
                if err:
                    errors.append(f"{rel}:{no}: {target}: {err}")
        for no, line in enumerate(raw, 1):
            for inc in INCLUDE.findall(line):
                if not (page.parent / inc).is_file():
                    errors.append(f"{rel}:{no}: {{{{#include {inc}}}}}: no such file")
    errors += check_reproduction_indexes()
    return errors


def check_target(page, target, in_book):
    if is_external(target):
        return None
    path, _, frag = target.partition("#")
    dest = (page.parent / path).resolve() if path else page.resolve()
    if not dest.exists():
        return "no such file"
    if in_book and DOCS.resolve() not in dest.parents:
        return "outside docs/, not part of the built book (name it in code instead)"
    if in_book and dest.is_dir():
        return "a folder: the built book has no page for it (link a file)"
    if frag:
        if dest.suffix != ".md":
            return "a fragment on a file that is not a page"
        if frag not in anchors(dest):
            return f"no heading or id '{frag}' in {dest.relative_to(ROOT)}"
    return None


def check_reproduction_indexes():
    """Every experiment script (a configs/*.sh with a #! line) is in both indexes."""
    errors = []
    scripts = sorted(
        p.name
        for p in (ROOT / "configs").glob("*.sh")
        if p.read_text(encoding="utf-8").startswith("#!")
    )
    for index in (ROOT / "configs" / "README.md", DOCS / "reproductions.md"):
        if not index.exists():
            errors.append(f"{index.relative_to(ROOT)}: missing (the index of the reproductions)")
            continue
        text = index.read_text(encoding="utf-8")
        for s in scripts:
            if s not in text:
                errors.append(f"{index.relative_to(ROOT)}: configs/{s} is not indexed")
    return errors


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)
            if k in ("href", "src") and v and tag in ("a", "img", "link", "script"):
                self.links.append((tag, v))


def check_html(build):
    build = Path(build).resolve()
    pages = {}
    for p in sorted(build.rglob("*.html")):
        parser = Page()
        parser.feed(p.read_text(encoding="utf-8"))
        pages[p] = parser
    if not pages:
        return [f"{build}: no HTML pages (was the book built?)"]
    errors = []
    for p, parsed in pages.items():
        # 404.html is served from the site's root (its links are absolute from there).
        if p.name == "404.html":
            continue
        for tag, target in parsed.links:
            if is_external(target) or target.startswith("/"):
                continue
            path, _, frag = target.partition("#")
            path = path.split("?")[0]
            dest = (p.parent / path).resolve() if path else p
            rel = p.relative_to(build)
            if not dest.is_file():
                errors.append(f"{rel}: {target}: no such file in the build")
            elif frag and dest.suffix == ".html" and frag not in pages[dest].ids:
                errors.append(f"{rel}: {target}: no id '{frag}' in {dest.relative_to(build)}")
    return errors


def main(argv):
    if len(argv) == 3 and argv[1] == "--html":
        errors, what = check_html(argv[2]), f"the book in {argv[2]}"
    elif len(argv) == 1:
        errors, what = check_markdown(), "README.md, configs/README.md and docs/"
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for e in errors:
        print(e)
    if errors:
        print(f"check-links: {len(errors)} broken link(s) in {what}", file=sys.stderr)
        return 1
    print(f"check-links: every relative link and anchor of {what} resolves", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main(sys.argv))
