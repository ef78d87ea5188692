"""HTML to markdown (standard library only): structure kept, noise dropped."""

from __future__ import annotations

import pytest

from fuxi_notebook._internal.tools.web.html_markdown import (
    convert_html,
    html_to_markdown,
    meta_charset,
)

BASE = "https://example.com/docs/page.html"


def md(html: str, base: str | None = BASE) -> str:
    return html_to_markdown(html, base)


def test_headings_paragraphs_and_inline_marks():
    html = ("<h1>Title <em>here</em></h1><p>One <strong>bold</strong>, <i>it</i>, "
            "<del>gone</del> and <code>x = 1</code>.</p><p>Two<br>lines</p><h3> Small </h3>")
    assert md(html) == ("# Title *here*\n\nOne **bold**, *it*, ~~gone~~ and `x = 1`.\n\n"
                        "Two\nlines\n\n### Small")


def test_whitespace_is_collapsed_and_entities_decoded():
    assert md("<p>  a\n\n   b\t&amp; &lt;c&gt; &nbsp;d &#x263A;</p>") == "a b & <c> d ☺"


def test_links_are_absolute_and_noise_links_are_text():
    html = ('<p><a href="../api.html#x">API</a> <a href="//cdn.example.org/f">CDN</a> '
            '<a href="#top">top</a> <a href="javascript:go()">go</a> '
            '<a href="mailto:a@b.c">mail</a> <a href="/x"><img src="i.png" alt=""></a></p>')
    # (a link around a decorative image has no text: it is dropped)
    assert md(html) == ("[API](https://example.com/api.html#x) "
                        "[CDN](https://cdn.example.org/f) top go [mail](mailto:a@b.c)")


def test_base_href_wins_over_the_page_url():
    html = '<head><base href="https://other.org/root/"></head><a href="a">A</a>'
    assert md(html) == "[A](https://other.org/root/a)"


def test_images():
    assert md('<p><img src="/p.png" alt="A  plot"> <img src="data:image/png;base64,xx" '
              'alt="inline"> <img src="x.gif"> <img src="deco.png" alt=""></p>') == (
        "![A plot](https://example.com/p.png) inline ![](https://example.com/docs/x.gif)")


def test_lists_nested_ordered_and_unclosed():
    html = ("<ul><li>one<li>two<ul><li>two a<li>two b</ul><li>three</ul>"
            "<ol start='4'><li><p>four</p><p>more</p><li>five</ol>")
    assert md(html) == ("- one\n- two\n  - two a\n  - two b\n- three\n\n"
                        "4. four\n   more\n5. five")


def test_list_nested_directly_in_a_list():
    assert md("<ul><li>a</li><ul><li>b</li></ul></ul>") == "- a\n  - b"


def test_code_blocks_keep_their_text_and_language():
    html = ('<pre><code class="language-python">def f():\n    return "&lt;x&gt;"\n'
            "</code></pre><pre>a ``` b</pre><p>Use <code>a`b</code></p>")
    assert md(html) == ('```python\ndef f():\n    return "<x>"\n```\n\n'
                        "````\na ``` b\n````\n\nUse ``a`b``")


def test_tables_roughly():
    html = ("<table><caption>Prices</caption><thead><tr><th>Item<th>Cost</thead>"
            "<tbody><tr><td>a|b<td><b>1</b><tr><td>c</tbody></table>")
    assert md(html) == ("Prices\n\n| Item | Cost |\n| --- | --- |\n| a\\|b | **1** |\n"
                        "| c |  |")


def test_layout_tables_are_just_content():
    assert md("<table><tr><td><h2>Head</h2><p>text</p></td></tr></table>") == (
        "## Head\n\ntext")


def test_blockquote_and_rule():
    assert md("<blockquote><p>one</p><p>two</p></blockquote><hr><p>after</p>") == (
        "> one\n>\n> two\n\n---\n\nafter")


def test_definition_lists():
    assert md("<dl><dt>Term<dd>Meaning</dl>") == "**Term**\n\nMeaning"


@pytest.mark.parametrize("noise", [
    "<script>alert('x')</script>", "<style>p { color: red }</style>",
    "<nav><a href='/'>Home</a></nav>", "<footer>(c) 2026</footer>",
    "<noscript>enable js</noscript>", "<div hidden>secret</div>",
    "<span aria-hidden='true'>icon</span>", "<div style='display: none'>x</div>",
    "<svg><title>chart</title><text>1</text></svg>", "<template><p>t</p></template>",
    "<form><input value='q'><button>Go</button><select><option>o</select></form>",
    "<iframe src='x'>frame</iframe>", "<aside>ad</aside>",
])
def test_noise_is_dropped(noise):
    assert md(f"<p>before</p>{noise}<p>after</p>") == "before\n\nafter"


def test_title_is_taken_from_head_not_from_svg():
    page = convert_html("<html><head><title> The\n Page </title></head><body>"
                        "<svg><title>icon</title></svg><p>x</p></body></html>")
    assert page.title == "The Page" and page.markdown == "x"
    assert convert_html("<p>no title</p>").title is None


def test_content_without_body_tag_is_not_lost_in_the_head():
    assert md("<html><head><title>t</title><p>content") == "content"
    assert md("<head><meta charset=utf-8><div>text</div>") == "text"


def test_implied_paragraph_ends():
    assert md("<p>one<p>two<div>three</div>") == "one\n\ntwo\n\nthree"


def test_blocks_inside_inline_elements():
    assert md("<span><div>a</div><div>b</div></span>") == "a\n\nb"
    assert md('<a href="/c"><div><h3>Card</h3></div></a>') == "[Card](https://example.com/c)"


def test_stray_end_tags_are_ignored():
    assert md("</div><p>a</span>b</p></li>") == "ab"


def test_deep_nesting_does_not_recurse_out_of_the_stack():
    html = "<div>" * 50_000 + "deep <b>text</b>" + "</div>" * 50_000
    assert md(html) == "deep text"  # below MAX_DEPTH, elements flatten into their ancestor
    lists = "<ul><li>" * 5_000 + "x"
    assert md(lists).strip().endswith("- x")


def test_without_base_url_links_stay_as_written():
    assert md('<a href="/x">x</a>', base=None) == "[x](/x)"


@pytest.mark.parametrize("head, charset", [
    (b'<meta charset="ISO-8859-1">', "iso8859-1"),
    (b"<META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=Shift_JIS'>", "shift_jis"),
    (b"<meta charset=utf-8>", "utf-8"),
    (b'<meta charset="no-such-codec">', None),
    (b"<p>no meta</p>", None),
])
def test_meta_charset(head, charset):
    assert meta_charset(b"<html><head>" + head) == charset
