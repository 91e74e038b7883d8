"""The conformance suite: packs and expected decisions that every runtime must reproduce.

`routing-core conformance generate` writes `conformance/` from the reference engine (this
library); `routing-core conformance check` runs a runtime over it and prints what differs
(conformance/README.md).
"""

from routing_core.conformance.cases import (
    CaseFile,
    check,
    differences,
    generate,
    in_process,
    read_suite,
)

__all__ = ["CaseFile", "check", "differences", "generate", "in_process", "read_suite"]
