"""Traffic: turns reported from production, charted and compared with the period before, the
review queue that turns them into test cases or examples, and replays on the draft or a version."""
