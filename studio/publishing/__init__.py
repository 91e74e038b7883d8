"""Publishing: immutable versions, the gate before shipping, diffs, environments and tokens; pages and API."""
