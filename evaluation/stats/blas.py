"""One BLAS thread for the statistics' matrix products. Pure (threadpoolctl, which scikit-learn brings).

The products here are skinny (millions of rows by a handful of columns, or a few resamples by the
clips): memory-bound, so BLAS threads give little, and on a busy machine they cost many times the
product itself (measured: the clip bootstrap of a 10,000-clip study took 7 s instead of 1 s with two
threads fighting other processes). The controller is built once: finding the loaded libraries is
the slow part of threadpoolctl.
"""

from functools import cache

from threadpoolctl import ThreadpoolController


@cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread():
    """A context manager: BLAS on one thread inside it."""
    return _controller().limit(limits=1, user_api="blas")
