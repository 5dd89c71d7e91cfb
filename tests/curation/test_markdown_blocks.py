"""A text page's own Markdown code blocks (code_web reads them for pages without HTML): a section cut
out of a longer note that starts inside a code block, closing fences with trailing spaces, CRLF lines
and ``~~~`` fences, the shapes of the real Chinese notes."""

from __future__ import annotations

import re

from curation.quality.html_code import markdown_blocks

HAN = re.compile(r"[\u4e00-\u9fff]")

# the tail of a code block the section was cut inside, its closing fence, prose, then a labelled block
CUT_SECTION = """    <p>Some text</p>
</body>
```

### URL

HTTP 使用 URL（ U niform Resource Locator，统一资源定位符）来定位资源，它是 URI 的子集。
URI 在 URL 的基础上增加了定位能力。

```html
<!DOCTYPE html>
<html><body>x</body></html>
```

最后一段说明文字，解释上面的页面。
"""


def test_a_section_that_starts_inside_a_code_block_gives_no_prose_as_code():
    blocks = markdown_blocks(CUT_SECTION)
    assert blocks == [("html", "<!DOCTYPE html>\n<html><body>x</body></html>")]
    assert not any(HAN.search(code) for _, code in blocks)


def test_closing_fences_with_spaces_crlf_and_tildes():
    assert markdown_blocks("```python \nx=1\n``` \nprose prose prose\n```") == [("python", "x=1")]
    assert markdown_blocks("intro\r\n```js\r\nlet a = 1;\r\n```\r\nend") == [("js", "let a = 1;")]
    assert markdown_blocks("~~~~sql\nSELECT 1;\n~~~\n~~~~\nafter") == [("sql", "SELECT 1;\n~~~")]
    assert markdown_blocks("  ```\n  plain block\n  ```") == [("", "  plain block")]


def test_a_block_left_open_counts_only_when_it_named_its_language():
    assert markdown_blocks("说明\n```c\nint main(void) {\n  return 0;") == [("c", "int main(void) {\n  return 0;")]
    assert markdown_blocks("code tail;\n```\n后面全是中文说明，没有代码。") == []
