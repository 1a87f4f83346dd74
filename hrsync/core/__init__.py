"""The functional core: pure functions over plain data (no I/O, the clock passed in).

read_people -> build_teams -> assign -> make_plan -> gate, and the checks of what DX
shows (verify). Nothing here reads files, the network, the environment, the clock or
the store; `tests/test_architecture.py` keeps it so.
"""
