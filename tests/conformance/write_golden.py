"""Write tests/golden/v<FORMAT_VERSION>/<tag>.bkf for every registered structure.

Run only when the format version changes (or a structure is added): ``python
tests/conformance/write_golden.py``. The golden files pin the format: today's code must write them
byte for byte."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.examples import EXAMPLES  # noqa: E402

from bloomkit._format import FORMAT_VERSION, registered_structures  # noqa: E402


def main() -> None:
    out = Path(__file__).parent.parent / "golden" / f"v{FORMAT_VERSION}"
    out.mkdir(parents=True, exist_ok=True)
    for tag in sorted(registered_structures()):
        path = out / f"{tag}.bkf"
        if path.exists():
            continue  # never overwrite a pinned file
        path.write_bytes(EXAMPLES[tag].make().to_bytes())
        print("wrote", path)


if __name__ == "__main__":
    main()
