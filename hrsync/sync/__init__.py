"""One run, start to finish: the only orchestration (imperative shell).

    story.py     run_sync: the stages in order, the lease, the run's record, sync.finished
    results.py   the run's vocabulary: SyncRequest, SyncResult, AttributeResult, and
                 RunEnded (the control-flow exception that ends a run)
    context.py   the run's context, the products stages hand on, and `end` (the one way
                 a stage ends a run)
    stages.py    assign → plan, gate; every stage importable from here
    reading.py   read → map (shared with `hrsync check` and `explain`)
    submit.py    preview, or submit: the submission recorded, then `process`
    confirm.py   after submit: polling teams.list, resends, the audit trail, and the
                 recovery of a submission an earlier run left unfinished
    error_outcomes.py  DX's errors as the run's outcomes
    attribute_step.py  the attribute step after the hierarchy (users.attributes.update)
    attribute_calls.py  its calls, one per person, each answer stored as it comes

Each step's thinking lives in a pure module of hrsync.core; this package only moves
data between them, DX and the store, and decides the run's outcome.

Crash safety: identities and the submission are written to the store before the
`process` call, each in its own committed transaction. A run that finds an unfinished
submission verifies it before planning anything new, so a restart never resubmits
blindly.
"""
