"""A report as one self-contained HTML file (pure): ``ask --format html`` and ``…/report.html``.

The file must open anywhere, years later, and must never call out: its CSS is inline, it has no
script, and its Content-Security-Policy (``default-src 'none'``) forbids every fetch even if a
bug let markup through. Every string from the evidence, and the question, is escaped
(``html.escape``); links lead only to http(s) permalinks and open without a referrer. A
comparison of two or more options with counted verdicts gets an inline SVG chart (``chart``).
"""

from __future__ import annotations

from html import escape

from crowdsift.pipeline.report.chart import stance_chart
from crowdsift.pipeline.report.content import Cited, Report, Row, Section, build_report
from crowdsift.pipeline.report.links import safe_url, source_anchor
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.display import SourceGroup

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""No script, no fetch, no frame: only the inline style and data: images."""
SAMPLE_NOTICE = (
    "SAMPLE DATA: this answer comes from the bundled sample archive, not real Reddit posts."
)
_NO_SPACE_BEFORE = tuple(".,;:!?)]}…”’»")

STYLE = """
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;
  max-width:52rem;margin:2rem auto;padding:0 1rem;background:#fff}
h1{font-size:1.6rem;line-height:1.3;margin:0 0 1rem}
h2{font-size:1.15rem;margin:2rem 0 .5rem;border-bottom:1px solid #e3e3e3;padding-bottom:.2rem}
.sample{background:#fff4d6;border:1px solid #e6c35c;padding:.5rem .75rem;border-radius:4px}
.note{color:#555}
sup.cite{font-size:.75em;white-space:nowrap}
sup.cite a{text-decoration:none}
a{color:#0b57d0}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{border:1px solid #ddd;padding:.4rem .5rem;vertical-align:top;text-align:left}
th{background:#f5f5f5}
td ul{margin:0;padding-left:1.1rem}
.stance-chart{display:block;margin:.75rem 0;max-width:100%;height:auto;font-size:12px}
.stance-chart text{fill:#333}
ul.sources{list-style:none;padding-left:0}
ul.sources>li{margin:.4rem 0}
ul.sources ul{list-style:none;padding-left:1.5rem}
.num{font-variant-numeric:tabular-nums;color:#555}
.where{color:#555}
:target{background:#fff4d6}
footer{margin-top:2.5rem;border-top:1px solid #e3e3e3;padding-top:.5rem;color:#555;font-size:.9rem}
"""


def render_html(result: ResearchResult) -> str:
    """The whole Reddit answer of ``result`` as one HTML document."""
    return html_report(build_report(result))


def html_report(report: Report) -> str:
    body = [f"<header><h1>{escape(report.question)}</h1>"]
    if report.sample_data:
        body.append(f'<p class="sample">{escape(SAMPLE_NOTICE)}</p>')
    body.append("</header><main>")
    body += [f'<p class="note">{escape(note)}</p>' for note in report.notes]
    if report.answer:
        body.append('<section id="answer"><h2>Answer</h2>')
        body += [f"<p>{cited(paragraph)}</p>" for paragraph in report.answer]
        body.append("</section>")
    body += [section(s) for s in report.sections]
    if report.rows:
        body.append(comparison(report))
    if report.sources.groups:
        body.append(sources(report))
    body.append(f"</main><footer><p>{escape(report.footer)}</p></footer>")
    return _page(report.question, "\n".join(body))


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)} — crowdsift</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def cite_links(numbers: tuple[int, ...]) -> str:
    links = "".join(f'<a href="#{source_anchor(n)}">[{n}]</a>' for n in numbers)
    return f'<sup class="cite">{links}</sup>' if numbers else ""


def cited(parts: Cited) -> str:
    """A paragraph or bullet: its prose escaped, each run of citations after its words."""
    out = ""
    for segment in parts:
        if segment.text:
            glue = out and not segment.text.startswith(_NO_SPACE_BEFORE)
            out += (" " if glue else "") + escape(segment.text)
        if segment.cites:
            out += (" " if out else "") + cite_links(segment.cites)
    return out


def section(part: Section) -> str:
    items = "".join(f"<li>{cited(item)}</li>" for item in part.items)
    return f'<section id="{part.key}"><h2>{escape(part.title)}</h2><ul>{items}</ul></section>'


def comparison(report: Report) -> str:
    """The stance chart (when two or more options have counts) and the table."""
    chart = stance_chart(report.chart_rows) if report.chart_rows else ""
    head = "<tr><th>Option</th><th>Verdict</th><th>For</th><th>Against</th><th>Sources</th></tr>"
    rows = "".join(_row(row) for row in report.rows)
    return (
        f'<section id="comparison"><h2>Comparison</h2>{chart}'
        f"<table><thead>{head}</thead><tbody>{rows}</tbody></table></section>"
    )


def _row(row: Row) -> str:
    def listed(items: tuple[str, ...]) -> str:
        return f"<ul>{''.join(f'<li>{escape(i)}</li>' for i in items)}</ul>" if items else ""

    return (
        f"<tr><td>{escape(row.option)}</td><td>{escape(row.verdict)}</td>"
        f"<td>{listed(row.pros)}</td><td>{listed(row.cons)}</td><td>{cite_links(row.cites)}</td></tr>"
    )


def sources(report: Report) -> str:
    """Each thread (video, product) with its number and permalink, its cited comments under it."""
    items = "".join(_group(group) for group in report.sources.groups)
    return f'<section id="sources"><h2>Sources</h2><ul class="sources">{items}</ul></section>'


def _group(group: SourceGroup) -> str:
    where = f'<span class="where">{escape(group.where)}</span> — ' if group.where else ""
    head = f"{where}{_link(group.title, group.url)}"
    if group.number is not None:
        head = f'<span class="num">[{group.number}]</span> {head}'
    ident = f' id="{source_anchor(group.number)}"' if group.number is not None else ""
    comments = "".join(
        f'<li id="{source_anchor(c.number)}"><span class="num">[{c.number}]</span> '
        f"{_link('comment', c.url)}</li>"
        for c in group.comments
    )
    return f"<li{ident}>{head}{f'<ul>{comments}</ul>' if comments else ''}</li>"


def _link(label: str, url: str) -> str:
    """A link that opens the permalink without telling it where from; text when not http(s)."""
    target = safe_url(url)
    text = escape(label) or "link"
    if target is None:
        return text
    return f'<a href="{escape(target)}" rel="noopener noreferrer">{text}</a>'
