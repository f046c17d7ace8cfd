"""The app as the realistic load bench serves it: config.wsgi's application,
unchanged, with each response saying how its time was spent inside the app.

A `Server-Timing` header (the W3C header browsers show in their developer
tools) carries, for every response: `app` (wall time from the WSGI call to
the response's headers), `cpu` (this thread's CPU time meanwhile), `db` (wall
time inside database calls, lock waits included), `dbcpu` (this thread's CPU
time inside them: the driver's own work) and `q` (statements sent). The load
generator subtracts `app` from the latency it saw: what is left waited
outside the app, for a server thread (granian's queue) or on the network.
Within the app, wall time that is neither CPU nor a database call is time
this thread could not run: waiting for the GIL, held by the process's other
threads.

The bench starts the web server with `bench._timed_wsgi:application` in the
realistic mode only; the hammer measures the app alone."""

import time

from django.db import connections

from config.wsgi import application as app


class _Timing:
    def __init__(self):
        self.started, self.cpu = time.perf_counter(), time.thread_time()
        self.db = self.db_cpu = 0.0
        self.statements = 0

    def __call__(self, execute, sql, params, many, context):
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return execute(sql, params, many, context)
        finally:
            self.db += time.perf_counter() - wall
            self.db_cpu += time.thread_time() - cpu
            self.statements += 1

    def header(self) -> tuple[str, str]:
        app_ms, cpu_ms = 1000 * (time.perf_counter() - self.started), 1000 * (time.thread_time() - self.cpu)
        return (
            "Server-Timing",
            f"app;dur={app_ms:.3f}, cpu;dur={cpu_ms:.3f}, db;dur={1000 * self.db:.3f}, "
            f"dbcpu;dur={1000 * self.db_cpu:.3f}, q;desc={self.statements}",
        )


def application(environ, start_response):
    timing = _Timing()

    def timed_start(status, headers, exc_info=None):
        return start_response(status, [*headers, timing.header()], exc_info)

    with connections["default"].execute_wrapper(timing):
        return app(environ, timed_start)
