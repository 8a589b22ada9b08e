"""The child side: one process runs one replicate of one cell, and imports torch to do it.

Only the fork server and its children import this package (and the spawned worker, with the
``spawn`` launcher). Of the parent's modules it uses only the stdlib-only data ones: the
matrix's cells, the protocol's messages, the kernel-cache folders and ``durable``'s disk-fault
codes (a child that cannot write its own files says so by its exit code).
"""
