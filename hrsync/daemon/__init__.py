"""`hrsync run`: APScheduler wiring, deferral resumption, quarantine, heartbeat, signals.

The scheduler keeps its jobs in memory only. Everything that must survive a
restart (a pending deferral, the failure streak) lives in our state store and is
turned back into jobs at start: APScheduler's persistent job stores silently drop
jobs they cannot unpickle.

Jobs:
- `schedule`  the cron job from `sync.schedule` in `sync.timezone`;
- `resume`    a one-off run at the end of a deferral (replaced by each new deferral);
- `startup`   a one-off run at start with `--now`;
- `heartbeat` every `sync.heartbeat_s`, so `hrsync healthcheck` can tell we are alive;
- `standby`   while another process (a second replica) holds the lease: watches it
              every few seconds and takes over at once if that run dies unfinished.

Runs never overlap: a job that fires while another run is in progress is skipped
(that run already does the work), and logged as `daemon.run_skipped` (warning), whether
our lock or APScheduler's `max_instances` skipped it. `run_sync` is expected to record
its run in the store (store.runs.start/finish) before returning: quarantine is computed
from there.

The modules, one concern each:
- `process`    `run`: signal handlers, the daemon and its monitor until stopped;
- `service`    `Daemon`: the owner of the jobs and the decision at each fire;
- `scheduler`  APScheduler: job ids, the daemon-thread executor, skipped fires;
- `quarantine` the failure streak, entered and left loudly;
- `standby`    another process's lease: watch it, take over when its run dies;
- `followups`  after a run: resume a deferral, retry an unverified run, a refusal waits;
- `heartbeat`  the beat in the store;
- `cron`       cron maths and the quarantine back-off (a leaf: the settings check
               `sync.schedule` with it).
"""
