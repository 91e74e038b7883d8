"""Authoring: profiles, their routes, rules and tools, the policy and lexicons, the rule builder, suggestions, the audit trail and restoring from it, the demo profile."""
