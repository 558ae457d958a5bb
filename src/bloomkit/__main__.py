import sys

if sys.argv[1:] == ["--version"]:  # `python -m bloomkit --version`: the version and the hash path
    from . import info

    about = info()
    print(f"bloomkit {about['version']} ({about['hash_path']})")
    sys.exit(0)

from .cli import main  # noqa: E402

sys.exit(main())
