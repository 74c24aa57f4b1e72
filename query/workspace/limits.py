"""The bounds search_workspace keeps: results, lines per conversation, files read, words
used, memory. Read them as ``limits.NAME`` so that a test can change one."""

from __future__ import annotations

# Lines of one conversation shown before other conversations get their turn; more
# are shown only when fewer conversations match than results were asked for.
LINES_PER_CONVERSATION = 3
EXCERPT_CHARS = 200
# A query word cut off at an end of the query matches every index term containing it;
# past this many terms the word no longer narrows the files worth reading.
MAX_EXPANSION = 512
# Tier 2 (every word, any order) narrows by a word only if at most this many terms hold
# it: each term's postings cost ~0.1 ms to read, and a piece of a time stamp ('54', '910z')
# is inside thousands of terms, each in a file or two.
MAX_WORD_TERMS = 64
# Nor does a word whose terms' postings outnumber the segment's documents this many times
# (it is in most of them: reading its postings costs more than the files it leaves out).
NARROW_POSTINGS = 2
# Lower-cased file texts kept in memory between queries (characters, all files together).
TEXT_CACHE_CHARS = 64 * 1024 * 1024
# The tiers below exact read at most this many files (the most promising first) and use
# at most this many words of the query.
MAX_FILES_READ = 300
MAX_WORDS = 32
# Words longer than this are not corrected (nothing indexed is that close to them).
MAX_CORRECTED_LENGTH = 40
# A query word matches the terms of its stem family; one with none matches the terms that
# hold it, if there are at most this many.
MAX_HOLDING = 64
