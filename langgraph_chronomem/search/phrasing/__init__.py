"""How people phrase undo requests: the patterns `search.intent` reads, one
module per question it asks of a request. Vocabulary only, no logic:
`search.intent.parse` decides with them.

- `spelling`: what did they type, in the spellings the patterns expect?
- `tokens`: which words and sentences does it have?
- `framing`: what is only politeness or framing ("please", "No, that's wrong.")?
- `nothing`: does it ask for nothing ("thanks!", "what did you delete?")?
- `commands`: which command: undo, restore, go back, redo?
- `held_back`: is the command negated or weighed ("no need to delete X")?
- `later`: is it put off or in doubt ("tomorrow, delete X", "maybe delete X")?
- `others`: is it someone else's ("my landlord wants to remove the carpet")?
- `kept`: what does it ask to keep ("..., but leave my allergies alone")?
- `corrections`: is it corrected or taken back ("..., wait, no, the van")?
- `verdict`: what does it say of the memory ("that was a joke", "it's right")?
- `going_back`: back to when, or before what ("when I still lived in Boston")?
- `redo`: is it an undo of an undo ("that undo was a mistake")?
- `giving_back`: does it ask for something back ("put my old job back")?
- `how_many`: the latest change, the last few, or everything?
- `naming`: which memory does it name ("the last update about my move")?

When it asks about is `search.times`.
"""
