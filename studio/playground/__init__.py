"""The playground: route a message on the draft, see why, hold a conversation, try thresholds;
its page and its API."""
