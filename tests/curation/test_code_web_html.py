"""Recall by HTML code tags and the re-parse that keeps code formatting, on real-looking pages."""

from curation.quality.html_code import code_blocks, code_tag_stats, reparse_html

DOC_PAGE = """<!DOCTYPE html>
<html lang="en"><head><title>Reading files | PyGuide</title>
<script>window.dataLayer=[];function gtag(){dataLayer.push(arguments);}</script>
<style>.x{color:red}</style></head>
<body>
<div id="cookie-banner" class="cookie-consent">We use cookies. <button>Accept</button></div>
<header class="site-header"><a href="/">PyGuide</a><nav><ul><li><a href="/docs">Docs</a></li><li><a href="/blog">Blog</a></li></ul></nav></header>
<div class="sidebar"><ul><li>Installation</li><li>Reading files</li></ul></div>
<main><article>
<h1 id="reading">Reading files<a class="headerlink" href="#reading">¶</a></h1>
<p>Open the file with a <code>with</code> block so it is closed again:</p>
<div class="highlight-python notranslate"><div class="highlight"><pre><span></span><span class="k">def</span> <span class="nf">count_lines</span><span class="p">(</span><span class="n">path</span><span class="p">):</span>
    <span class="k">with</span> <span class="nb">open</span><span class="p">(</span><span class="n">path</span><span class="p">)</span> <span class="k">as</span> <span class="n">f</span><span class="p">:</span>
        <span class="k">return</span> <span class="nb">sum</span><span class="p">(</span><span class="mi">1</span> <span class="k">for</span> <span class="n">_</span> <span class="ow">in</span> <span class="n">f</span><span class="p">)</span>
</pre></div></div>
<p>A table with line numbers, as some highlighters write it:</p>
<table class="highlighttable"><tr><td class="linenos"><pre>1
2
3</pre></td><td class="code"><pre class="language-go">func main() {
	for i := 0; i &lt; 3; i++ {
		fmt.Println(i)
	}
}</pre></td></tr></table>
</article></main>
<footer class="site-footer"><p>© 2024 PyGuide. All rights reserved.</p><p>Privacy policy</p></footer>
</body></html>
"""


def test_code_tags_recall_the_page():
    stats = code_tag_stats(DOC_PAGE)
    assert stats.pre_blocks == 3 and stats.code_elements == 1 and stats.highlighted >= 2
    assert stats.recalled()
    assert not code_tag_stats("<html><body><p>Only prose here.</p></body></html>").recalled()
    assert not code_tag_stats("").recalled()
    # inline <code> alone is not a code page
    assert not code_tag_stats("<p>Call <code>len()</code> on it.</p>").recalled()


def test_reparse_keeps_indentation_and_leaves_out_boilerplate():
    text = reparse_html(DOC_PAGE)
    assert "```python\ndef count_lines(path):\n    with open(path) as f:\n        return sum(1 for _ in f)\n```" in text
    assert "```go\nfunc main() {\n\tfor i := 0; i < 3; i++ {\n\t\tfmt.Println(i)\n\t}\n}\n```" in text
    assert "1\n2\n3" not in text  # the line-number gutter is left out
    for boilerplate in ("cookies", "Accept", "Blog", "Installation", "All rights reserved", "Privacy", "gtag", "color:red"):
        assert boilerplate not in text
    assert text.startswith("# Reading files")
    assert "a `with` block" in text


def test_code_blocks_of_reparsed_text():
    blocks = code_blocks(reparse_html(DOC_PAGE))
    assert [lang for lang, _ in blocks] == ["python", "go"]


def test_br_lines_and_unparseable_html():
    page = "<html><body><p>Run:</p><pre>make<br>make install</pre></body></html>"
    assert "```\nmake\nmake install\n```" in reparse_html(page)
    assert reparse_html("") == "" and reparse_html(None) == ""


def test_naive_extraction_loses_what_the_reparse_keeps():
    # the flattened text a WET extractor gives for the same block
    flat = "def count_lines(path): with open(path) as f: return sum(1 for _ in f)"
    assert "\n    with open" not in flat and "\n    with open" in reparse_html(DOC_PAGE)
