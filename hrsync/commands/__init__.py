"""What each `hrsync` command does, one module per command or small family.

`cli` parses the command line and hands the parsed arguments to one function here;
`startup` is where every command loads its settings, configures logging and opens the
state store.
"""
