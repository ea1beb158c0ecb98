"""Words that say what a message does to an earlier one, for the offline reading.

Without a language model AWAI still says, in one line, what a message does: answers a question,
agrees (perhaps on a condition), grants a point, disagrees, revises an earlier claim, or returns
to something said long before. These are surface cues — deterministic, English and Japanese,
and marked as cues wherever they are shown — not an understanding of the message. Why keep
them this plain: a reader can check every one of them against the words, and the same message
always gets the same line.

One module per question a cue answers, so each word list sits next to the only rule that reads
it: :mod:`.questions` (does a message ask, and for a yes or a no), :mod:`.answers` (does it open
as an answer), :mod:`.stance` (what its opening does: agrees, on a condition, concedes,
disagrees, revises), :mod:`.returns` (does it go back to an earlier topic); :mod:`.words` (how
a cue word is matched, after any address) and :mod:`.sentences` (where a sentence ends) serve
them all.
"""
