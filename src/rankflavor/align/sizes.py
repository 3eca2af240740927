"""The sizes at which alignment changes how it works: when a run is big enough for a second
thread, how a pass over the run is split into blocks, and when a lookup table is too large.

The stage's modules read them here at call time (``sizes.BLOCK_ROWS``), so a test can shrink
one to put small inputs through the paths big inputs take; the results never depend on them.
"""

#: Runs longer than this are aligned on two threads (the duplicate check, the judged-row
#: lookups and the join are shared), and their text docnos are coded from hashes.
PARALLEL_ROWS = 200_000
#: Largest document-code span for which the join first marks judged documents in a flat table.
FLAT_SPAN = 1 << 27
#: Rows per block where a pass over the run is split to keep temporaries in cache.
BLOCK_ROWS = 1 << 18
#: Candidate rows per part of a join two threads share.
JOIN_ROWS = 1 << 17
#: Consecutive query blocks of one length, at least this many, are checked for duplicates as a
#: matrix (fewer cost more in calls than they save in sorting).
MATRIX_BLOCKS = 8
