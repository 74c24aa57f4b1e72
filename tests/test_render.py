"""query/site/render.py: documents as safe HTML, with the query's words marked (the pages
that use it are tested in test_site.py)."""

from __future__ import annotations

import re

from markupsafe import Markup

from query.site import render


def test_the_words_of_a_query_worth_marking_are_its_words_and_the_phrase_longest_first() -> None:
    assert render.query_terms(None) == []
    assert render.query_terms("") == []
    assert render.query_terms("Proxy timeout") == ["proxy timeout", "timeout", "proxy"]


def test_words_of_one_letter_are_not_marked_but_two_letters_and_cjk_characters_are() -> None:
    assert render.query_terms("a ab") == ["ab"]
    assert render.query_terms("x 中") == ["中"]
    assert render.query_terms("a b") == []


def test_a_query_of_one_word_is_not_marked_again_as_a_phrase() -> None:
    assert render.query_terms("  hello!  ") == ["hello"]


def test_at_most_20_terms_are_marked_the_first_ones_of_the_query() -> None:
    words = [f"w{i:02d}" for i in range(25)]
    assert render.query_terms(" ".join(words)) == words[:20]


def test_repeated_words_are_marked_once_whatever_their_case() -> None:
    assert render.query_terms("Net net NET") == ["net net net", "net"]


def test_highlight_escapes_the_text_and_marks_every_term_in_any_case() -> None:
    marked = render.highlight("<b>Net & net</b>", ["net"])
    assert isinstance(marked, Markup)
    assert str(marked) == "&lt;b&gt;<mark>Net</mark> &amp; <mark>net</mark>&lt;/b&gt;"


def test_highlight_without_terms_only_escapes() -> None:
    assert str(render.highlight("a<b", [])) == "a&lt;b"


def test_a_term_that_matches_nothing_visible_marks_nothing_and_stops_nothing() -> None:
    assert str(render.highlight("a<b", [""])) == "a&lt;b"
    assert str(render.highlight("axb x", ["x", ""])) == "a<mark>x</mark>b <mark>x</mark>"


def test_a_mark_never_splits_an_escaped_character() -> None:
    assert str(render.highlight("a&b", ["amp", "&b"])) == "a<mark>&amp;b</mark>"


def test_highlight_html_marks_text_between_tags_and_never_inside_one() -> None:
    html = '<p title="net">net</p>net<b>x &amp; net</b>'
    assert str(render.highlight_html(html, ["net", "amp"])) == (
        '<p title="net"><mark>net</mark></p><mark>net</mark><b>x &amp; <mark>net</mark></b>'
    )
    assert render.highlight_html(html, []) == Markup(html)


def test_markdown_is_rendered_with_an_anchor_for_every_line_before_its_block() -> None:
    text = "# Title\n\npara one\nline two\n\n- item\n"
    assert str(render.markdown(text, ["one"])) == (
        '<a id="L1"></a><h1>Title</h1>\n'
        '<a id="L2"></a><a id="L3"></a><a id="L4"></a><p>para <mark>one</mark>\nline two</p>\n'
        '<a id="L5"></a><a id="L6"></a><ul>\n<li>item</li>\n</ul>\n'
    )


def test_markdown_shows_raw_html_as_text_and_renders_tables_and_strikethrough() -> None:
    text = "~~gone~~ `a<b` <b>raw</b>\n\n| h |\n| - |\n| c |\n"
    assert str(render.markdown(text, ["raw", "b"])) == (
        '<a id="L1"></a><p><s>gone</s> <code>a&lt;<mark>b</mark></code> '
        "&lt;<mark>b</mark>&gt;<mark>raw</mark>&lt;/<mark>b</mark>&gt;</p>\n"
        '<a id="L2"></a><a id="L3"></a><a id="L4"></a><a id="L5"></a><table>\n<thead>\n'
        "<tr>\n<th>h</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>c</td>\n</tr>\n</tbody>\n</table>\n"
    )


def test_code_blocks_keep_their_language_escaped_and_mark_terms() -> None:
    fenced = '```py"><x> extra\nfoo <i>\n```\n'
    assert str(render.markdown(fenced, ["foo"])) == (
        '<a id="L1"></a><a id="L2"></a><a id="L3"></a>'
        '<pre><code class="language-py&#34;&gt;&lt;x&gt;"><mark>foo</mark> &lt;i&gt;\n'
        "</code></pre>\n"
    )
    indented = "    foo\n"
    assert str(render.markdown(indented, ["foo"])) == (
        '<a id="L1"></a><pre><code><mark>foo</mark>\n</code></pre>\n'
    )
    assert str(render.markdown("```\nbar\n```\n")) == (
        '<a id="L1"></a><a id="L2"></a><a id="L3"></a><pre><code>bar\n</code></pre>\n'
    )


def test_markdown_refuses_script_links() -> None:
    shown = str(render.markdown("[x](javascript:alert(1)) [y](https://e.org)"))
    assert 'href="javascript' not in shown
    assert 'href="https://e.org"' in shown


def test_sanitised_elog_html_keeps_nothing_that_runs() -> None:
    body = (
        '<p onclick="x()">a<script>bad()</script><style>p{}</style>'
        '<a href="javascript:x">j</a><a href="https://e.org">h</a><a href="/rel">r</a>'
        '<a href="mailto:a@b">m</a></p>'
    )
    rel = 'rel="noopener noreferrer nofollow"'
    assert render.sanitise_html(body) == (
        f'<p>a<a {rel}>j</a><a href="https://e.org" {rel}>h</a><a href="/rel" {rel}>r</a>'
        f'<a href="mailto:a@b" {rel}>m</a></p>'
    )


def test_an_elog_body_is_shown_as_its_encoding_says() -> None:
    html = render.elog_body("<b>net</b><script>x</script>", " HTML ", "visible", ["net"])
    assert str(html) == '<div class="elog-html"><b><mark>net</mark></b></div>'
    plain = render.elog_body("<b>net</b>", "Plain", "visible net", ["net"])
    assert str(plain) == '<div class="elog-text">&lt;b&gt;<mark>net</mark>&lt;/b&gt;</div>'
    elcode = render.elog_body("[b]net[/b]", "ELCode", "visible <net>", ["net"])
    assert str(elcode) == '<div class="elog-text">visible &lt;<mark>net</mark>&gt;</div>'


def test_a_frontmatter_value_is_one_line_of_text() -> None:
    assert render.frontmatter_value(None) == ""
    assert render.frontmatter_value(3) == "3"
    assert render.frontmatter_value(["a", None, 2]) == "a, , 2"
    assert render.frontmatter_value({"k": ["x", "y"], "n": {"m": 1}}) == "k: x, y; n: m: 1"


def test_elog_html_links_keep_only_web_and_mail_urls() -> None:
    body = '<a href="ftp://x/y">f</a><a href="tel:123">t</a><a href="data:text/html,x">d</a>'
    rel = 'rel="noopener noreferrer nofollow"'
    assert render.sanitise_html(body) == f"<a {rel}>f</a><a {rel}>t</a><a {rel}>d</a>"


def test_a_code_block_takes_the_first_word_of_its_info_as_language() -> None:
    shown = str(render.markdown("```py a b\nx\n```\n"))
    assert '<code class="language-py">' in shown


def test_the_block_after_a_one_token_block_gets_its_anchors_before_it() -> None:
    assert str(render.markdown("```\nx\n```\n# H\n")) == (
        '<a id="L1"></a><a id="L2"></a><a id="L3"></a><pre><code>x\n</code></pre>\n'
        '<a id="L4"></a><h1>H</h1>\n'
    )


NESTED = """# Title

- a
- b
  - nested *em*
  - more

> quote
> > inner
> line

1. one

   para in item
2. two

| a | b |
|---|---|
| 1 | 2 |

    indented

[ref]: https://example.com
see [ref] and ![img](https://e.org/i.png)
"""


def test_markdown_cut_into_blocks_renders_as_the_whole_document_does_but_for_the_anchors() -> None:
    shown = str(render.markdown(NESTED, ["a"]))
    assert re.sub(r'<a id="L\d+"></a>', "", shown) == render._markdown(["a"]).render(NESTED)
    assert '<a href="https://example.com">ref</a>' in shown  # a reference defined below
    assert re.findall(r'<a id="L(\d+)"></a>', shown) == [
        str(n) for n in range(1, NESTED.count("\n") + 1)
    ]


def test_markdown_neither_links_bare_urls_nor_curls_quotes() -> None:
    shown = str(render.markdown('"q" (c) -- https://e.org'))
    assert shown == '<a id="L1"></a><p>&#34;q&#34; (c) -- https://e.org</p>\n'
