"""What every area of the studio shares: errors, the audit trail, packs built from the database,
page decorators, roles, labels in words, API plumbing. It imports no area of the studio."""
