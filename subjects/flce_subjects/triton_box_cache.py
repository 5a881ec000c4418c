"""Triton's kernel cache in two layers: the campaign's own directory (TRITON_CACHE_DIR, reused by
a resumed run) over one directory for the whole box (FLCE_TRITON_BOX_CACHE).

A nightly runs a dozen campaigns on one box, over Liger trees that share most kernels. Triton's
cache is content-addressed (the key hashes the kernel's source, its specialization, Triton and
the device), so a kernel one campaign compiled is the same binary for the next: without the box
layer each campaign JIT-compiles Liger's kernels and Triton's launchers again, about a second on
a campaign's first case (its time to first finding) and most of an eager case's time early on.

Chosen by the campaign (fuzz/findings/worker_client.cpp) through TRITON_CACHE_MANAGER. The box
layer is best effort: any error there falls back to the campaign's directory alone, so a full
or read-only box cache never fails a subject's compile.
"""
import json
import os
import uuid

from triton.runtime.cache import FileCacheManager

BOX_ENV = "FLCE_TRITON_BOX_CACHE"


def _write_atomically(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}.{uuid.uuid4().hex}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # readers never see a partial entry


def _read(path):
    with open(path, "rb") as f:
        return f.read()


class BoxCacheManager(FileCacheManager):
    def __init__(self, key, override=False, dump=False):
        super().__init__(key, override=override, dump=dump)
        box = os.environ.get(BOX_ENV)
        # The dump and override directories are Triton's debugging aids: left as they are.
        self.box_dir = os.path.join(box, key) if box and not (override or dump) else None

    def _box_path(self, filename):
        return os.path.join(self.box_dir, filename)

    def _from_box(self, filename):
        """Copies the box's entry into the campaign's directory; its path there, or None."""
        if not self.box_dir:
            return None
        try:
            data = _read(self._box_path(filename))
        except OSError:
            return None
        return super().put(data, filename)

    def _to_box(self, data, filename):
        if not self.box_dir:
            return
        try:
            _write_atomically(self._box_path(filename), data if isinstance(data, bytes) else str(data).encode())
        except OSError:
            pass  # best effort: the campaign's directory has it

    def get_file(self, filename):
        return super().get_file(filename) or self._from_box(filename)

    def put(self, data, filename, binary=True):
        path = super().put(data, filename, binary=binary)
        if not filename.startswith("__grp__"):  # a group goes to the box by put_group, as names
            self._to_box(data, filename)
        return path

    def get_group(self, filename):
        local = super().get_group(filename)
        if local is not None or not self.box_dir:
            return local
        # The box keeps a group as its members' names: their paths are this campaign's.
        try:
            names = json.loads(_read(self._box_path(f"__grp__{filename}")))["child_names"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        group = {}
        for name in names:
            path = super().get_file(name) or self._from_box(name)
            if path is None:
                return None  # an incomplete group is a miss: Triton compiles it again
            group[name] = path
        super().put_group(filename, group)
        return group

    def put_group(self, filename, group):
        path = super().put_group(filename, group)
        self._to_box(json.dumps({"child_names": sorted(group)}), f"__grp__{filename}")
        return path
