"""A grid's HTML report parsed back (html.parser): its tags, links, element ids, all its
text, the table's cells and the cited passages (<pre class="quote">)."""

from html.parser import HTMLParser


class GridPage(HTMLParser):
    def __init__(self, html: str = "") -> None:
        super().__init__()
        self.tags, self.links, self.ids, self.text, self.cells, self.quotes = [], [], set(), [], [], []
        self._into = None
        if html:
            self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "a":
            self.links.append(attrs.get("href"))
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "td" or (tag == "pre" and attrs.get("class") == "quote"):
            self._into = (tag, [])

    def handle_endtag(self, tag):
        if self._into and tag == self._into[0]:
            (self.cells if tag == "td" else self.quotes).append("".join(self._into[1]))
            self._into = None

    def handle_data(self, data):
        self.text.append(data)
        if self._into:
            self._into[1].append(data)
