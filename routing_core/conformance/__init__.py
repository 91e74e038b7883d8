"""The conformance suite: packs and expected decisions that every runtime must reproduce.

`routing-core conformance generate` writes `conformance/` from the reference engine (this
library); `routing-core conformance check` runs a runtime over it and prints what differs
(conformance/README.md).
"""
