"""Text that agents, packs and logs control, made inert before Streamlit's markdown sees it.

Streamlit renders markdown in ``st.markdown``, captions, alerts, headers and labels: an agent's
``![x](https://...)`` there makes every visitor's browser fetch a URL the agent chose. Every
ASCII punctuation mark may be escaped in CommonMark, so escaping them all leaves no
image, link, emphasis, HTML or math. GitHub-style autolinks are found in the text after it is
parsed (``http://...``, ``www.``, e-mail addresses), so a word joiner (U+2060, invisible) goes
after each such scheme, ``www`` and ``@``: the text reads as written and links nowhere.
"""

from __future__ import annotations

import re
import string

_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_AUTOLINK = re.compile(r"(?i)(\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)|@)")
WORD_JOINER = "\u2060"


def md_escape(text: object) -> str:
    """``text`` as literal markdown: each ASCII punctuation mark a character reference.

    >>> md_escape("![x](http://e.com)").replace(WORD_JOINER, "~")
    '&#33;&#91;x&#93;&#40;http~&#58;&#47;&#47;e&#46;com&#41;'
    """
    unlinked = _AUTOLINK.sub(lambda m: m.group(1) + WORD_JOINER, str(text))
    escaped = _PUNCTUATION.sub(lambda m: f"&#{ord(m.group(1))};", unlinked)
    return escaped.replace("\n", "  \n")  # a hard break: a newline stays a newline
