"""Exit 0 when every `name==version` pin of requirements.txt is installed, else 1 (naming what is
not). torch matches by prefix, so a GPU machine's 2.11.0+cu130 counts as 2.11.0. Imports nothing
heavy, so `make` asks it on every run."""
import re
import sys
from importlib import metadata

missing = []
for line in open(sys.argv[1] if len(sys.argv) > 1 else "requirements.txt", encoding="utf-8"):
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==(\S+)", line)
    if not m:
        continue
    name, version = m.group(1), m.group(3)
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        missing.append(f"{name}=={version} (not installed)")
        continue
    if installed != version and not installed.startswith(version + "+"):
        missing.append(f"{name}=={version} (have {installed})")
if missing:
    print("missing Python packages: " + ", ".join(missing))
    sys.exit(1)
