"""The characters of scripts written without spaces (CJK): the sources index them one
character a token, so that any run of them is found by the characters it holds (then
verified on the text), and the engine keeps each pair of them side by side
(indexer/engine/pairs.py)."""

CJK_CHARS = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
