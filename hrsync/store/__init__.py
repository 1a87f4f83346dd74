"""The SQLite state store: identities, runs, submissions, deferrals, lease, heartbeat."""
