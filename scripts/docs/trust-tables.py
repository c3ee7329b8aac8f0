#!/usr/bin/env python3
"""Regenerates the figures of docs/trust.md from the two scoreboards.

    python3 scripts/docs/trust-tables.py          # rewrite docs/trust.md
    python3 scripts/docs/trust-tables.py --check  # fail if it is stale

The host table (agreement per metric) is counted from the per-shape tables
of docs/validation.md, the tolerances from docs/fidelity-score.md, and the
published summary from docs/published.md's summary line. Each generated
block of docs/trust.md sits between `<!-- generated: NAME -->` and
`<!-- end: NAME -->`.
"""
import re
import sys
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def host_rows():
    """(family, metric) -> [agree, total] over every shape of validation.md."""
    counts = OrderedDict()
    for line in (DOCS / "validation.md").read_text().splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) != 7 or c[0] == "family":
            continue
        verdict = c[6]
        if verdict != "yes" and not verdict.startswith("**no**"):
            continue
        k = (c[0], c[1])
        counts.setdefault(k, [0, 0])
        counts[k][1] += 1
        counts[k][0] += verdict == "yes"
    return counts


def tolerances():
    """(family, metric) -> tolerance text from fidelity-score.md's table."""
    tol = {}
    for line in (DOCS / "fidelity-score.md").read_text().splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) >= 4 and c[0].startswith("`") and c[1].startswith("`"):
            tol[(c[0].strip("`"), c[1].strip("`"))] = c[2]
    return tol


def overall():
    m = re.search(r"\*\*Overall fidelity score: ([0-9.]+)\*\*", (DOCS / "validation.md").read_text())
    return m.group(1) if m else "?"


def host_block():
    counts = host_rows()
    tol = tolerances()
    out = ["| family | metric | tolerance | agree |", "|---|---|---|---|"]
    for (fam, met), (a, n) in sorted(counts.items()):
        out.append(f"| {fam} | {met} | {tol.get((fam, met), '?')} | {a} of {n} |")
    total_a = sum(a for a, _ in counts.values())
    total_n = sum(n for _, n in counts.values())
    out.append("")
    out.append(
        f"In all {total_a} of {total_n} metric comparisons agree; the overall score is "
        f"{overall()} (1 is perfect, 0.5 is every metric at its tolerance)."
    )
    return "\n".join(out)


def published_block():
    text = (DOCS / "published.md").read_text()
    m = re.search(r"\*\*Summary: (.*?)\*\*", text)
    summary = m.group(1) if m else "?"
    kinds = re.findall(r"^\* \*\*([a-z ]+)\*\* \((\d+)\)", text, re.M)
    k = ", ".join(f"{n} {name}" for name, n in kinds)
    return f"Summary line of docs/published.md: **{summary}** Misses by kind: {k}."


def render(page):
    for name, block in (("host", host_block()), ("published", published_block())):
        pat = re.compile(r"(<!-- generated: %s -->).*?(<!-- end: %s -->)" % (name, name), re.S)
        if not pat.search(page):
            sys.exit(f"docs/trust.md: no generated block '{name}'")
        page = pat.sub(lambda mm: mm.group(1) + "\n" + block + "\n" + mm.group(2), page)
    return page


def main():
    path = DOCS / "trust.md"
    old = path.read_text()
    new = render(old)
    if "--check" in sys.argv[1:]:
        if new != old:
            sys.exit("docs/trust.md is stale: run python3 scripts/docs/trust-tables.py")
        return
    path.write_text(new)
    print("wrote", path.relative_to(ROOT))


if __name__ == "__main__":
    main()
