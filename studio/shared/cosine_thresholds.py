"""The names under which migration 0014 recorded the embedding thresholds it cleared.

Since pack format 1.2 an embedding tier's floor and near-tie margin are probabilities; a
profile saved before then held the old cosine, which migration 0014 cleared, with an entry
in the profile's history saying what was cleared and why (docs/decisions.md, "A declared
embedding floor's meaning"). The pages find that entry by these names (the history's label,
the policy page's notice). The migration decides with its own frozen copy of its logic and
of these names, so nothing here can change what it clears.
"""

# The audit action of the migration's entry; its `after` holds NOTICE_KEY, the sentence.
CLEARED_ACTION = "profile.cosine_thresholds_cleared"
NOTICE_KEY = "notice"
