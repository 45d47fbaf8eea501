"""The worker plugin that pins pyinterp's shared objects as they arrive on a Dask worker (see
_distributed.pin). Imported only with a Dask backend active, and on its workers: it imports
distributed, which the rest of the package never does."""

import distributed

from . import _distributed


class PinOnArrival(distributed.WorkerPlugin):
    name = "pyinterp-pins"

    def setup(self, worker):
        self.worker = worker

    def transition(self, key, start, finish, **kwargs):
        if finish == "memory" and isinstance(key, str) and key.startswith(_distributed.PIN_PREFIX):
            _distributed.pin(key, self.worker.data)
