"""A pytest plugin for tests/config/test_database_passes.py: prints each deselected test's id."""


def pytest_deselected(items):
    for item in items:
        print(f"deselected {item.nodeid}")
