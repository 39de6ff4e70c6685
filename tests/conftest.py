"""The test session keeps npu-audit's user cache (the knowledge-base snapshot, the compiled methods of the
record classes) in a folder of its own, not in the developer's ``~/.cache/npu-audit``: a test must neither
read what another version of npu-audit left there nor leave its own classes in it. Set before npu_audit is
imported; the processes the tests start inherit it (tests about the cache set their own)."""

import atexit
import os
import shutil
import tempfile

_SESSION_CACHE = tempfile.mkdtemp(prefix="npu-audit-test-cache-")
os.environ["XDG_CACHE_HOME"] = _SESSION_CACHE
# (removed at exit, after npu_audit.records has written its file there: exit handlers run last-registered first)
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)
